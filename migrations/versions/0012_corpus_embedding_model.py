"""corpus: which model and precision made the stored vectors (one row)

Revision ID: 0012
Revises: 0011

Chunk and sentence vectors are compared with query vectors of the running embedder; vectors of
two precisions (fp32, int8) must not be mixed. `corpus_embedding` names the model the corpus's
vectors come from (`all-MiniLM-L6-v2/fp32`) and, while `research-engine corpus reembed` runs, the
one they are being converted to. Every corpus embedded before this revision was embedded in fp32,
so a database holding papers or sentence vectors is stamped `all-MiniLM-L6-v2/fp32`; an empty
one gets its stamp from its first ingest.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "corpus_embedding",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("reembedding_to", sa.String(length=200), nullable=True),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint("id = 1", name="ck_corpus_embedding_one_row"),
    )
    op.execute(
        "INSERT INTO corpus_embedding (id, model) SELECT 1, 'all-MiniLM-L6-v2/fp32' "
        "WHERE EXISTS (SELECT 1 FROM corpus_chunks) OR EXISTS (SELECT 1 FROM corpus_sentences)"
    )


def downgrade() -> None:
    op.drop_table("corpus_embedding")
