"""corpus: sentence vectors computed at ingest, found by a digest of the sentence

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22 19:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Looked up by key only (never by similarity): no vector index.
    op.create_table(
        "corpus_sentences",
        sa.Column("key", sa.LargeBinary(length=16), primary_key=True),
        sa.Column("embedding", Vector(384), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("corpus_sentences")
