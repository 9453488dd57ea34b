"""replicator: the re-critiques a retraction asks for, held in the ledger until the critic has room

Revision ID: 0014
Revises: 0013

A retraction wave used to publish one `RecritiqueClaim` per affected claim at once (about a
thousand on the critic's queue in `bench:living`). Each is now a row here, written with its
`retracted_source` finding in the retraction's transaction, and the replicator publishes them a
few at a time (`REPLICATOR__RECRITIQUE_IN_FLIGHT`): held (`requested_at` null) → requested →
settled (the critic judged it, or the claim left `active`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "held_recritiques",
        sa.Column(
            "finding_id",
            postgresql.UUID(as_uuid=True),
            sa.ForeignKey("findings.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("claim_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("reason", sa.String(length=50), nullable=False),
        sa.Column(
            "held_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index(
        "ix_held_recritiques_waiting",
        "held_recritiques",
        ["held_at"],
        postgresql_where=sa.text("requested_at IS NULL"),
    )
    op.create_index(
        "ix_held_recritiques_out",
        "held_recritiques",
        ["requested_at"],
        postgresql_where=sa.text("requested_at IS NOT NULL AND settled_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_held_recritiques_out", table_name="held_recritiques")
    op.drop_index("ix_held_recritiques_waiting", table_name="held_recritiques")
    op.drop_table("held_recritiques")
