"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 01:00:01.413294
"""

from __future__ import annotations

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


AUDIT_GUARD = (
    """CREATE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('research.audit_retention', true) = 'on' AND TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_events is append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$""",
    """CREATE TRIGGER audit_events_append_only
    BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change()""",
    """CREATE TRIGGER audit_events_no_truncate
    BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_refuse_change()""",
    """-- The only way rows leave the audit log: retention, older than `before`.
CREATE FUNCTION audit_events_purge(before timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    removed bigint;
BEGIN
    PERFORM set_config('research.audit_retention', 'on', true);
    DELETE FROM audit_events WHERE occurred_at < before;
    GET DIAGNOSTICS removed = ROW_COUNT;
    PERFORM set_config('research.audit_retention', 'off', true);
    RETURN removed;
END;
$$""",
)


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "agent_runs",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("agent", sa.String(length=50), nullable=False),
        sa.Column("trigger", sa.String(length=20), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("counts", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_agent_runs_agent_started", "agent_runs", ["agent", "started_at"], unique=False
    )
    op.create_table(
        "agent_controls",
        sa.Column("agent", sa.String(length=50), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("cancel_run_id", sa.UUID(), nullable=True),
        sa.Column("updated_by", sa.String(length=100), nullable=True),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("agent"),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_hash"),
    )
    op.create_table(
        "audit_events",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column(
            "occurred_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("service", sa.String(length=50), nullable=False),
        sa.Column("action", sa.String(length=100), nullable=False),
        sa.Column("task_id", sa.UUID(), nullable=True),
        sa.Column("claim_id", sa.UUID(), nullable=True),
        sa.Column("subject_ids", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_audit_events_action_time", "audit_events", ["action", "occurred_at"], unique=False
    )
    op.create_index(op.f("ix_audit_events_claim_id"), "audit_events", ["claim_id"], unique=False)
    op.create_index(op.f("ix_audit_events_task_id"), "audit_events", ["task_id"], unique=False)
    op.create_table(
        "corpus_papers",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("external_id", sa.String(length=300), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("abstract", sa.Text(), nullable=False),
        sa.Column("authors", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("venue", sa.Text(), nullable=True),
        sa.Column("doi", sa.String(length=300), nullable=True),
        sa.Column("citation_count", sa.Integer(), nullable=True),
        sa.Column("keywords", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("external_id", name="uq_corpus_papers_external_id"),
    )
    op.create_index(op.f("ix_corpus_papers_year"), "corpus_papers", ["year"], unique=False)
    op.create_table(
        "findings",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("agent", sa.String(length=50), nullable=False),
        sa.Column("kind", sa.String(length=50), nullable=False),
        sa.Column("claim_ids", postgresql.ARRAY(sa.UUID()), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "expires_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now() + interval '180 days'"),
            nullable=False,
        ),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", sa.String(length=50), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_findings_agent_created", "findings", ["agent", "created_at"], unique=False)
    op.create_index("ix_findings_expires", "findings", ["expires_at"], unique=False)
    op.create_index(
        "ix_findings_claim_ids",
        "findings",
        ["claim_ids"],
        unique=False,
        postgresql_using="gin",
        postgresql_with={"fastupdate": "off"},
    )
    op.create_table(
        "memory_claims",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("task_id", sa.UUID(), nullable=True),
        sa.Column("entity", sa.String(length=200), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("supports", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("supersedes", postgresql.ARRAY(sa.UUID()), nullable=False),
        sa.Column("superseded_by", sa.UUID(), nullable=True),
        sa.Column("decay_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("dropped_supports", sa.Integer(), nullable=False),
        sa.Column("critic_timeouts", sa.Integer(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("task_id"),
    )
    op.create_index(
        "ix_memory_claims_embedding",
        "memory_claims",
        ["embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index(
        "ix_memory_claims_entity_status", "memory_claims", ["entity", "status"], unique=False
    )
    op.create_index(
        "ix_memory_claims_active_created",
        "memory_claims",
        ["created_at", "id"],
        unique=False,
        postgresql_where=sa.text("status = 'active'"),
    )
    op.create_table(
        "research_sources",
        sa.Column("source_id", sa.String(length=300), nullable=False),
        sa.Column("source", sa.String(length=50), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("authors", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("venue", sa.Text(), nullable=True),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("doi", sa.String(length=300), nullable=True),
        sa.Column("abstract", sa.Text(), nullable=False),
        sa.Column("metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("retracted", sa.Boolean(), nullable=False),
        sa.Column(
            "first_seen_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "last_seen_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("source_id"),
    )
    op.create_table(
        "research_tasks",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("entity", sa.String(length=200), nullable=True),
        sa.Column("tier", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("origin", sa.String(length=100), nullable=False),
        sa.Column("request", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "corpus_chunks",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("paper_id", sa.BigInteger(), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("section", sa.String(length=50), nullable=False),
        sa.Column("locator", sa.String(length=100), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=False),
        sa.Column("tsv", postgresql.TSVECTOR(), nullable=False),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["paper_id"], ["corpus_papers.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("paper_id", "chunk_index", name="uq_corpus_chunks_paper_chunk"),
    )
    op.create_index(
        "ix_corpus_chunks_embedding",
        "corpus_chunks",
        ["embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index(op.f("ix_corpus_chunks_paper_id"), "corpus_chunks", ["paper_id"], unique=False)
    op.create_index(
        "ix_corpus_chunks_tsv", "corpus_chunks", ["tsv"], unique=False, postgresql_using="gin"
    )
    op.create_table(
        "corpus_lexemes",
        sa.Column("lexeme", sa.Text(), nullable=False),
        sa.Column("doc_freq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("lexeme"),
    )
    op.create_table(
        "corpus_stats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("avg_doc_len", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "corpus_postings",
        sa.Column("lexeme", sa.Text(), nullable=False),
        sa.Column("chunk_id", sa.BigInteger(), nullable=False),
        sa.Column("tf_text", sa.Integer(), nullable=False),
        sa.Column("tf_title", sa.Integer(), nullable=False),
        sa.Column("doc_len", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["chunk_id"], ["corpus_chunks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("lexeme", "chunk_id"),
    )
    op.create_index(
        op.f("ix_corpus_postings_chunk_id"), "corpus_postings", ["chunk_id"], unique=False
    )
    op.create_table(
        "critic_verdicts",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("claim_id", sa.UUID(), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=False),
        sa.Column("supersedes", postgresql.ARRAY(sa.UUID()), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["claim_id"],
            ["memory_claims.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        op.f("ix_critic_verdicts_claim_id"), "critic_verdicts", ["claim_id"], unique=False
    )
    op.create_table(
        "connector_cache",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=50), nullable=False),
        sa.Column("request", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("hits", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index("ix_connector_cache_expires", "connector_cache", ["expires_at"], unique=False)
    for statement in AUDIT_GUARD:
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS audit_events_no_truncate ON audit_events")
    op.execute("DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events")
    op.execute("DROP FUNCTION IF EXISTS audit_events_purge(timestamptz)")
    op.execute("DROP FUNCTION IF EXISTS audit_events_refuse_change()")
    op.drop_index("ix_connector_cache_expires", table_name="connector_cache")
    op.drop_table("connector_cache")
    op.drop_index(op.f("ix_critic_verdicts_claim_id"), table_name="critic_verdicts")
    op.drop_table("critic_verdicts")
    op.drop_index(op.f("ix_corpus_postings_chunk_id"), table_name="corpus_postings")
    op.drop_table("corpus_postings")
    op.drop_table("corpus_stats")
    op.drop_table("corpus_lexemes")
    op.drop_index("ix_corpus_chunks_tsv", table_name="corpus_chunks", postgresql_using="gin")
    op.drop_index(op.f("ix_corpus_chunks_paper_id"), table_name="corpus_chunks")
    op.drop_index(
        "ix_corpus_chunks_embedding",
        table_name="corpus_chunks",
        postgresql_using="hnsw",
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_table("corpus_chunks")
    op.drop_table("research_tasks")
    op.drop_table("research_sources")
    op.drop_index(
        "ix_memory_claims_active_created",
        table_name="memory_claims",
        postgresql_where=sa.text("status = 'active'"),
    )
    op.drop_index("ix_memory_claims_entity_status", table_name="memory_claims")
    op.drop_index(
        "ix_memory_claims_embedding",
        table_name="memory_claims",
        postgresql_using="hnsw",
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_table("memory_claims")
    op.drop_index("ix_findings_claim_ids", table_name="findings")
    op.drop_index("ix_findings_expires", table_name="findings")
    op.drop_index("ix_findings_agent_created", table_name="findings")
    op.drop_table("findings")
    op.drop_index(op.f("ix_corpus_papers_year"), table_name="corpus_papers")
    op.drop_table("corpus_papers")
    op.drop_index(op.f("ix_audit_events_task_id"), table_name="audit_events")
    op.drop_index(op.f("ix_audit_events_claim_id"), table_name="audit_events")
    op.drop_index("ix_audit_events_action_time", table_name="audit_events")
    op.drop_table("audit_events")
    op.drop_table("api_keys")
    op.drop_table("agent_controls")
    op.drop_index("ix_agent_runs_agent_started", table_name="agent_runs")
    op.drop_table("agent_runs")
