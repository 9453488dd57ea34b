"""corpus: the postings' primary key covers the BM25 columns, so lexical search reads only the index

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 02:55:00

BM25 reads every posting of the query's lexemes (14,639 rows for a 19-lexeme SciFact claim).
Through the plain (lexeme, chunk_id) key each row cost a heap page visit (12,343 buffer hits,
12 ms); with tf_text, tf_title and doc_len in the key's leaf pages it is an index-only scan
(55 pages). Same uniqueness, no second index to maintain on ingest.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE corpus_postings DROP CONSTRAINT corpus_postings_pkey")
    op.execute(
        "ALTER TABLE corpus_postings ADD CONSTRAINT corpus_postings_pkey"
        " PRIMARY KEY (lexeme, chunk_id) INCLUDE (tf_text, tf_title, doc_len)"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE corpus_postings DROP CONSTRAINT corpus_postings_pkey")
    op.execute(
        "ALTER TABLE corpus_postings ADD CONSTRAINT corpus_postings_pkey PRIMARY KEY (lexeme, chunk_id)"
    )
