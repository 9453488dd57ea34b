"""corpus: postings ordered by impact within each lexeme, so BM25 reads a bounded prefix per lexeme

Revision ID: 0013
Revises: 0012

BM25 scored every posting of the query's lexemes, so a query's cost grew with the corpus (a
common lexeme has one posting per chunk that holds it). Each posting now carries its `impact`,
the length-normalised term frequency `tf / (1 - b + b * doc_len / avgdl)` (tf = text occurrences
+ title_weight * title occurrences): within one lexeme, BM25's term score is a monotone function
of it, whatever k1. The index `(lexeme, impact DESC) INCLUDE (chunk_id, tf_text, tf_title,
doc_len)` lets search read the `lexical_depth` best postings of each lexeme, index only. It
replaces the primary key `(lexeme, chunk_id)` INCLUDE (…), which held the same columns a second
time: chunk ids are new for every chunk written, so the pair cannot repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    from research_platform.settings import get_settings

    settings = get_settings().corpus  # the b and title weight the writer uses from now on
    op.execute("ALTER TABLE corpus_postings ADD COLUMN impact real NOT NULL DEFAULT 0")
    op.execute(
        sa.text(
            """UPDATE corpus_postings SET impact = (tf_text + :title_weight * tf_title)
                   / (1 - :b + :b * doc_len / s.avgdl)
               FROM (SELECT greatest(avg_doc_len, 1)::float8 AS avgdl FROM corpus_stats WHERE id = 1) s"""
        ).bindparams(b=settings.bm25_b, title_weight=settings.title_weight)
    )
    op.execute("ALTER TABLE corpus_postings ALTER COLUMN impact DROP DEFAULT")
    op.execute("ALTER TABLE corpus_postings DROP CONSTRAINT corpus_postings_pkey")
    op.execute(
        "CREATE INDEX ix_corpus_postings_impact ON corpus_postings (lexeme, impact DESC)"
        " INCLUDE (chunk_id, tf_text, tf_title, doc_len)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_corpus_postings_impact")
    op.execute(
        "ALTER TABLE corpus_postings ADD CONSTRAINT corpus_postings_pkey"
        " PRIMARY KEY (lexeme, chunk_id) INCLUDE (tf_text, tf_title, doc_len)"
    )
    op.execute("ALTER TABLE corpus_postings DROP COLUMN impact")
