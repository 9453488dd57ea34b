"""gateway: per-key quotas and workspaces, task owners, the shared failed-key throttle, console sessions

Revision ID: 0015
Revises: 0014

What one key may ask of the engine now lives where every gateway replica reads it:
- `key_limits`: an admin's override of a key's quotas (a null column keeps the default);
- `key_submissions`: one row per expensive submission (reviews, verifications, source lists,
  tasks, PDF exports), counted for an hour and holding a run slot until its run ends;
- `key_workspaces`: the workspaces a researcher key may name (none listed = `default`);
- `auth_failures`: the failed key checks the throttle counts (was one process's memory);
- `console_sessions` / `console_codes`: the console's server-side sign-ins (the cookie holds a
  session id, no longer the API key) and the single-use codes `research-engine up` prints.
`research_tasks.owner_key_id` names the key that submitted a task; tasks from before have none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _key_column(*, primary_key: bool = False) -> sa.Column[Any]:
    return sa.Column(
        "key_id",
        postgresql.UUID(as_uuid=True),
        sa.ForeignKey("api_keys.id", ondelete="CASCADE"),
        primary_key=primary_key,
        nullable=False,
    )


def _now(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False)


def upgrade() -> None:
    op.add_column(
        "research_tasks",
        sa.Column("owner_key_id", postgresql.UUID(as_uuid=True), nullable=True),
    )
    op.create_index("ix_research_tasks_owner_key_id", "research_tasks", ["owner_key_id"])
    op.create_table(
        "key_limits",
        _key_column(primary_key=True),
        sa.Column("runs_in_flight", sa.Integer(), nullable=True),
        sa.Column("submissions_per_hour", sa.Integer(), nullable=True),
        sa.Column("watched_claims", sa.Integer(), nullable=True),
        _now("updated_at"),
    )
    op.create_table(
        "key_submissions",
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=True),
        sa.Column("key_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("subject_id", postgresql.UUID(as_uuid=True), nullable=True),
        sa.Column("run_id", sa.String(length=128), nullable=True),
        sa.Column("watch", sa.Boolean(), nullable=False),
        _now("submitted_at"),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_key_submissions_recent", "key_submissions", ["key_id", "submitted_at"])
    op.create_index(
        "ix_key_submissions_in_flight",
        "key_submissions",
        ["key_id", "kind"],
        postgresql_where=sa.text("released_at IS NULL"),
    )
    op.create_table(
        "key_workspaces",
        _key_column(primary_key=True),
        sa.Column("workspace", sa.String(length=100), primary_key=True),
    )
    op.create_table(
        "auth_failures",
        sa.Column("id", sa.BigInteger(), primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(length=64), nullable=False),
        _now("failed_at"),
    )
    op.create_index("ix_auth_failures_source", "auth_failures", ["source", "failed_at"])
    op.create_index("ix_auth_failures_failed_at", "auth_failures", ["failed_at"])
    op.create_table(
        "console_sessions",
        sa.Column("id_hash", sa.String(length=64), primary_key=True),
        _key_column(),
        _now("created_at"),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_console_sessions_key_id", "console_sessions", ["key_id"])
    op.create_table(
        "console_codes",
        sa.Column("code_hash", sa.String(length=64), primary_key=True),
        _key_column(),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("spent_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("console_codes")
    op.drop_index("ix_console_sessions_key_id", table_name="console_sessions")
    op.drop_table("console_sessions")
    op.drop_index("ix_auth_failures_failed_at", table_name="auth_failures")
    op.drop_index("ix_auth_failures_source", table_name="auth_failures")
    op.drop_table("auth_failures")
    op.drop_table("key_workspaces")
    op.drop_index("ix_key_submissions_in_flight", table_name="key_submissions")
    op.drop_index("ix_key_submissions_recent", table_name="key_submissions")
    op.drop_table("key_submissions")
    op.drop_table("key_limits")
    op.drop_index("ix_research_tasks_owner_key_id", table_name="research_tasks")
    op.drop_column("research_tasks", "owner_key_id")
