"""corpus: compact BM25 postings, no stored full-text vector on chunks

Revision ID: 0020
Revises: 0019

Two things the ingest stored that search does not need as stored:

- `corpus_chunks.tsv` and its GIN index. BM25 reads the postings, and the postings are computed
  from the full-text vector at ingest (the ingest computes it in the same statement and keeps
  only the postings and the length). The one other reader, the reports' topic filter
  (`research_corpus.analytics`), computes the same vector from the paper's title and the chunk's
  text when it asks.
- Wide postings. A posting was `(lexeme text, chunk_id bigint, tf_text int, tf_title int,
  doc_len int, impact real)`: 60 bytes a row in the heap and 52 in the impact index, padding
  included. Term counts fit `smallint` (a tsvector keeps at most 256 positions per lexeme; a
  chunk's length is capped at 32,767 in its postings, far beyond a chunk's 180 words), chunk ids
  `integer` (2^31 chunks), and the fixed-width columns go first so the heap row is not padded:
  about 52 bytes in the heap and 36 in the index. The impact index is built full (fillfactor
  100): the corpus is mostly appended in bulk and read.
- A B-tree on the postings' chunk id (about 880 bytes a paper), which only deleting a revised
  paper's chunks reads. Postings are written in chunk-id order (a batch's chunks get new ids and
  their postings are inserted together), so a BRIN index over it (`pages_per_range` 16) finds a
  chunk's postings in a few pages for a few kilobytes in all.

Upgrade rewrites `corpus_postings` in place (a new table filled from the old one in chunk-id
order, as the ingest writes postings, so the BRIN finds a chunk's postings in a few pages; then
renamed, the old one dropped) and drops the chunks' column and index. The
dropped column's bytes stay in the chunks' rows until the table is rewritten: `VACUUM FULL
corpus_chunks` gives them back. `downgrade` restores the wide postings and the `tsv` column
(computed again from the papers' titles and the chunks' texts, exactly as the ingest did) with
its GIN index.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_IMPACT_INDEX = (
    "CREATE INDEX ix_corpus_postings_impact ON corpus_postings (lexeme, impact DESC)"
    " INCLUDE (chunk_id, tf_text, tf_title, doc_len)"
)
# Title (weight A) + chunk text (weight B): the full-text vector the ingest computes.
TSV = (
    "setweight(to_tsvector('english', coalesce(p.title, '')), 'A')"
    " || setweight(to_tsvector('english', c.text), 'B')"
)


def _postings(columns: str, select: str, chunk_index: str) -> None:
    """Replace `corpus_postings` by a table of `columns` filled by `select` from the old one."""
    op.execute(f"CREATE TABLE corpus_postings_new ({columns})")
    op.execute(f"INSERT INTO corpus_postings_new {select} ORDER BY chunk_id")
    op.execute("DROP TABLE corpus_postings")
    op.execute("ALTER TABLE corpus_postings_new RENAME TO corpus_postings")
    op.execute(
        "ALTER TABLE corpus_postings ADD CONSTRAINT corpus_postings_chunk_id_fkey"
        " FOREIGN KEY (chunk_id) REFERENCES corpus_chunks (id) ON DELETE CASCADE"
    )
    op.execute(f"CREATE INDEX ix_corpus_postings_chunk_id ON corpus_postings {chunk_index}")


def upgrade() -> None:
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    _postings(
        "chunk_id integer NOT NULL, impact real NOT NULL, tf_text smallint NOT NULL,"
        " tf_title smallint NOT NULL, doc_len smallint NOT NULL, lexeme text NOT NULL",
        "SELECT chunk_id, impact, least(tf_text, 32767), least(tf_title, 32767),"
        " least(doc_len, 32767), lexeme FROM corpus_postings",
        "USING brin (chunk_id) WITH (pages_per_range = 16)",
    )
    op.execute(f"{_IMPACT_INDEX} WITH (fillfactor = 100)")
    op.execute("DROP INDEX IF EXISTS ix_corpus_chunks_tsv")
    op.execute("ALTER TABLE corpus_chunks DROP COLUMN IF EXISTS tsv")


def downgrade() -> None:
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    _postings(
        "lexeme text NOT NULL, chunk_id bigint NOT NULL, tf_text integer NOT NULL,"
        " tf_title integer NOT NULL, doc_len integer NOT NULL, impact real NOT NULL",
        "SELECT lexeme, chunk_id, tf_text, tf_title, doc_len, impact FROM corpus_postings",
        "(chunk_id)",
    )
    op.execute(_IMPACT_INDEX)
    op.execute("ALTER TABLE corpus_chunks ADD COLUMN tsv tsvector")
    op.execute(
        f"UPDATE corpus_chunks c SET tsv = {TSV} FROM corpus_papers p WHERE p.id = c.paper_id"
    )
    op.execute("ALTER TABLE corpus_chunks ALTER COLUMN tsv SET NOT NULL")
    op.execute("CREATE INDEX ix_corpus_chunks_tsv ON corpus_chunks USING gin (tsv)")
