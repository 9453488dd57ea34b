"""source lists (scout): workspace limits, schedules, run history, per-source actions, refinement trace

Revision ID: 0005
Revises: 0002
Create Date: 2026-11-22 17:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "source_list_limits",
        sa.Column("workspace", sa.String(length=100), primary_key=True),
        sa.Column("max_references", sa.Integer(), nullable=False),
        sa.Column("allowed_source_types", postgresql.ARRAY(sa.String(length=20)), nullable=False),
        sa.Column("allowed_apis", postgresql.ARRAY(sa.String(length=40)), nullable=False),
        sa.Column("max_scheduled_lists", sa.Integer(), nullable=False),
        sa.Column("min_update_interval_s", sa.Integer(), nullable=False),
        sa.Column("detail_level_ceiling", sa.String(length=30), nullable=False),
        sa.Column("default_language", sa.String(length=35), nullable=False),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
    )
    # The default workspace with the seed's defaults (seed 002 §4.1).
    op.execute(
        "INSERT INTO source_list_limits (workspace, max_references, allowed_source_types, allowed_apis,"
        " max_scheduled_lists, min_update_interval_s, detail_level_ceiling, default_language) VALUES"
        " ('default', 50, ARRAY['academic','general','news'],"
        " ARRAY['semantic_scholar','crossref','openalex','pubmed','europepmc','arxiv','corpus','tavily'],"
        " 10, 86400, 'facts_list', 'en')"
    )
    op.create_table(
        "source_list_schedules",
        sa.Column(
            "source_list_id",
            sa.UUID(),
            sa.ForeignKey("reports.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("workspace", sa.String(length=100), nullable=False),
        sa.Column("update_frequency", sa.String(length=40), nullable=False),
        sa.Column("every_s", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
    )
    op.create_index("ix_source_list_schedules_workspace", "source_list_schedules", ["workspace"])
    op.create_index(
        "ix_source_list_schedules_due",
        "source_list_schedules",
        ["next_run_at"],
        postgresql_where=sa.text("status = 'active'"),
    )
    op.create_table(
        "source_list_runs",
        sa.Column("run_id", sa.String(length=128), primary_key=True),
        sa.Column(
            "source_list_id",
            sa.UUID(),
            sa.ForeignKey("reports.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("trigger", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sources", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("stop_reason", sa.String(length=40), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
    )
    op.create_index("ix_source_list_runs_source_list_id", "source_list_runs", ["source_list_id"])
    op.create_table(
        "source_list_actions",
        sa.Column(
            "source_list_id",
            sa.UUID(),
            sa.ForeignKey("reports.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("source_id", sa.UUID(), primary_key=True),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("stored", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
    )
    op.create_table(
        "source_list_iterations",
        sa.Column("run_id", sa.String(length=128), primary_key=True),
        sa.Column("iteration", sa.Integer(), primary_key=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("counts", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("memo", sa.Text(), nullable=False),
        sa.Column("stop_reason", sa.String(length=40), nullable=True),
    )
    op.create_table(
        "source_list_judgements",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("run_id", sa.String(length=128), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.UUID(), nullable=False),
        sa.Column("origin_id", sa.String(length=300), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("label", sa.String(length=20), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("rationale", sa.Text(), nullable=False),
    )
    op.create_index("ix_source_list_judgements_run_id", "source_list_judgements", ["run_id"])


def downgrade() -> None:
    op.drop_table("source_list_judgements")
    op.drop_table("source_list_iterations")
    op.drop_table("source_list_actions")
    op.drop_index("ix_source_list_runs_source_list_id", table_name="source_list_runs")
    op.drop_table("source_list_runs")
    op.drop_index("ix_source_list_schedules_due", table_name="source_list_schedules")
    op.drop_index("ix_source_list_schedules_workspace", table_name="source_list_schedules")
    op.drop_table("source_list_schedules")
    op.drop_table("source_list_limits")
