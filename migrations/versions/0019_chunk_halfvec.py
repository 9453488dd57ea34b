"""corpus: chunk vectors stored in half precision

Revision ID: 0019
Revises: 0018

`corpus_chunks.embedding` becomes `halfvec(384)` (2 bytes a dimension: 776 bytes a vector instead
of 1,544) and its HNSW index `halfvec_cosine_ops`; search compares a query in half precision too.
Retrieval on SciFact holds (docs/benchmarks.md, bench:retrieval). The column is converted in
place (one table rewrite and the index rebuilt: seconds for SciFact's 8k chunks, about a minute
per 10^5 papers). The way back, `downgrade`, converts to `vector(384)` again; the half-precision
rounding stays until `research-engine corpus reembed` recomputes the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_corpus_chunks_embedding")
    op.execute(
        "ALTER TABLE corpus_chunks ALTER COLUMN embedding TYPE halfvec(384)"
        " USING CAST(embedding AS halfvec(384))"
    )
    op.execute(
        "CREATE INDEX ix_corpus_chunks_embedding ON corpus_chunks"
        " USING hnsw (embedding halfvec_cosine_ops)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_corpus_chunks_embedding")
    op.execute(
        "ALTER TABLE corpus_chunks ALTER COLUMN embedding TYPE vector(384)"
        " USING CAST(embedding AS vector(384))"
    )
    op.execute(
        "CREATE INDEX ix_corpus_chunks_embedding ON corpus_chunks"
        " USING hnsw (embedding vector_cosine_ops)"
    )
