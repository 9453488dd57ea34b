"""The ledger's tables, SQLAlchemy 2 typed models (DESIGN.md §3): tasks and sources, claims and the
critic's verdicts, findings, the audit log, API keys and their limits, submissions and workspaces,
console sessions, reports with their versions and claims, watched claims and their verdict history,
held re-critiques, and source lists with their schedules, runs, actions, iterations, judgements and
limits. Only this package reads and writes them; services reach them through
`Ledger.unit_of_work` (`research_ledger.ledger`).

`audit_events` is append-only: a trigger refuses UPDATE and DELETE unless the transaction runs
the retention function `audit_events_purge(before)`.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, TypeVar

from pgvector.sqlalchemy import Vector
from pydantic import BaseModel
from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
    inspect,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from research_platform.tables import EMBEDDING_DIM, Base

_View = TypeVar("_View", bound=BaseModel)


def view_of(view: type[_View], row: Base, **given: Any) -> _View:
    """`row` as `view`: each of the view's fields that is a column of the row, and `given` (a
    renamed id, a converted value) over them. Only those columns are read (a deferred one the view
    does not name stays unloaded)."""
    columns = inspect(type(row)).column_attrs
    read = {name: getattr(row, name) for name in view.model_fields if name in columns}
    return view.model_validate({**read, **given})


def _now() -> Any:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


class ResearchTask(Base):
    """A submitted research question and where it is in the pipeline."""

    __tablename__ = "research_tasks"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    entity: Mapped[str | None] = mapped_column(String(200))
    tier: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(
        String(20), default="queued"
    )  # queued|researching|claimed|failed
    origin: Mapped[str] = mapped_column(String(100), default="api")
    request: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    # The API key that submitted it (migration 0015); None for a task from the bus or from before.
    owner_key_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    created_at: Mapped[datetime] = _now()
    updated_at: Mapped[datetime] = _now()


class ResearchSource(Base):
    """A source the engine has cited or seen, keyed by its source-prefixed id."""

    __tablename__ = "research_sources"

    source_id: Mapped[str] = mapped_column(String(300), primary_key=True)
    source: Mapped[str] = mapped_column(String(50))
    title: Mapped[str] = mapped_column(Text, default="")
    authors: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    venue: Mapped[str | None] = mapped_column(Text)
    year: Mapped[int | None] = mapped_column(Integer)
    url: Mapped[str | None] = mapped_column(Text)
    doi: Mapped[str | None] = mapped_column(String(300))
    abstract: Mapped[str] = mapped_column(Text, default="")
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSONB, default=dict)
    retracted: Mapped[bool] = mapped_column(Boolean, default=False)
    first_seen_at: Mapped[datetime] = _now()
    last_seen_at: Mapped[datetime] = _now()


class MemoryClaim(Base):
    """A claim in the ledger: pending → active | rejected | critic_quarantine; active → superseded."""

    __tablename__ = "memory_claims"
    __table_args__ = (
        Index("ix_memory_claims_entity_status", "entity", "status"),
        # The librarian and replicator walk active claims in creation (≈ physical) order.
        Index(
            "ix_memory_claims_active_created",
            "created_at",
            "id",
            postgresql_where=text("status = 'active'"),
        ),
        Index(
            "ix_memory_claims_embedding",
            "embedding",
            postgresql_using="hnsw",
            postgresql_ops={"embedding": "vector_cosine_ops"},
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    task_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), unique=True)
    entity: Mapped[str] = mapped_column(String(200))
    question: Mapped[str] = mapped_column(Text)
    statement: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    confidence: Mapped[float] = mapped_column(Float, default=0.0)
    supports: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    supersedes: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)), default=list)
    superseded_by: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    decay_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Deferred: only SQL reads it (memory recall orders by it); loading 384 floats as text with
    # every claim the services fetch cost more than the rest of the row.
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True, deferred=True)
    model: Mapped[str] = mapped_column(String(200), default="offline")
    dropped_supports: Mapped[int] = mapped_column(Integer, default=0)
    critic_timeouts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = _now()
    updated_at: Mapped[datetime] = _now()
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class CriticVerdictRow(Base):
    """Every verdict the critic gave, kept even when the claim moves on."""

    __tablename__ = "critic_verdicts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    claim_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("memory_claims.id"), index=True)
    verdict: Mapped[str] = mapped_column(String(20))
    score: Mapped[float] = mapped_column(Float)
    reasoning: Mapped[str] = mapped_column(Text)
    supersedes: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)), default=list)
    model: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = _now()


class Finding(Base):
    """What a periodic agent noticed; insert-only, resolvable once, expires after 180 days."""

    __tablename__ = "findings"
    __table_args__ = (
        Index("ix_findings_agent_created", "agent", "created_at"),
        Index("ix_findings_expires", "expires_at"),
        # fastupdate off: lookups per batch must not scan a growing pending list
        Index(
            "ix_findings_claim_ids",
            "claim_ids",
            postgresql_using="gin",
            postgresql_with={"fastupdate": "off"},
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    agent: Mapped[str] = mapped_column(String(50))
    kind: Mapped[str] = mapped_column(String(50))
    claim_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)), default=list)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = _now()
    expires_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=text("now() + interval '180 days'")
    )
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    resolved_by: Mapped[str | None] = mapped_column(String(50))


class AuditEvent(Base):
    """Append-only log of every state change (Grafana reads it)."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_events_action_time", "action", "occurred_at"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    occurred_at: Mapped[datetime] = _now()
    service: Mapped[str] = mapped_column(String(50))
    action: Mapped[str] = mapped_column(String(100))
    task_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    claim_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), index=True)
    subject_ids: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)


class ApiKey(Base):
    """An operator API key, stored as a SHA-256 hash; the secret is shown once at creation."""

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    role: Mapped[str] = mapped_column(String(20))  # admin | researcher | reader
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = _now()
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ReportRow(Base):
    """A long job's report (literature review, claim verification, source list) and where it is.

    Written only by `research_ledger` (open → completed | failed; completed → stale → running on
    refresh). The content lives in `report_versions`; `current_version` names the latest one.
    """

    __tablename__ = "reports"
    __table_args__ = (Index("ix_reports_kind_status", "kind", "status"),)

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))  # review | verification | source_list
    status: Mapped[str] = mapped_column(
        String(20), default="running"
    )  # running|completed|failed|stale
    run_id: Mapped[str] = mapped_column(
        String(128)
    )  # the current run (its events: research.run.<run_id>.event)
    subject: Mapped[str] = mapped_column(Text)  # the topic / claim / query, de-identified
    subject_key: Mapped[str] = mapped_column(String(200))  # ledger entity of the report's claims
    request: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    owner: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    save_to: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    current_version: Mapped[int] = mapped_column(Integer, default=0)
    stale_reason: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = _now()
    updated_at: Mapped[datetime] = _now()


class ReportVersionRow(Base):
    """One version of a report: structured content, its Markdown, the checks and the diff to the previous one."""

    __tablename__ = "report_versions"
    __table_args__ = (UniqueConstraint("report_id", "run_id", name="uq_report_versions_run"),)

    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(String(128))
    content: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    markdown: Mapped[str] = mapped_column(Text, default="")
    citation_check: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    review: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    claim_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)), default=list)
    diff: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = _now()


class ReportClaim(Base):
    """A ledger claim the current version of a report rests on (the stale lookup goes claim → reports)."""

    __tablename__ = "report_claims"

    report_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    claim_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, index=True)


# --- claim verification: watched claims and their verdict history (migration 0007) ---------------


class WatchedClaimRow(Base):
    """A verification's claim the ledger keeps re-verifying (`research_ledger.watched`)."""

    __tablename__ = "watched_claims"

    verification_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    claim: Mapped[str] = mapped_column(Text)
    interval_days: Mapped[float] = mapped_column(Float)
    next_due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    requested_run_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class VerdictHistoryRow(Base):
    """One run's verdict on a verification (its history, oldest first)."""

    __tablename__ = "verification_verdicts"

    verification_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    run_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    verdict: Mapped[str] = mapped_column(String(40))
    confidence: Mapped[str] = mapped_column(String(20))
    judge: Mapped[str | None] = mapped_column(
        String(80), nullable=True
    )  # the judge's version (migration 0017)
    recorded_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )


# --- re-critiques a retraction asked for, held until the critic has room (migration 0014) --------


class HeldRecritique(Base):
    """A `retracted_source` finding's re-critique: held → requested (published) → settled (the
    critic judged it, or the claim left `active`); `research_ledger.recritiques`."""

    __tablename__ = "held_recritiques"
    __table_args__ = (
        Index(
            "ix_held_recritiques_waiting",
            "held_at",
            postgresql_where=text("requested_at IS NULL"),
        ),
        Index(
            "ix_held_recritiques_out",
            "requested_at",
            postgresql_where=text("requested_at IS NOT NULL AND settled_at IS NULL"),
        ),
    )

    finding_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("findings.id", ondelete="CASCADE"), primary_key=True
    )
    claim_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    reason: Mapped[str] = mapped_column(String(50))
    held_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    settled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


# --- source lists: schedules, runs, per-source actions, the refinement trace (migration 0005) -----


class SourceListSchedule(Base):
    """When a source list runs again: active ⇄ paused; active | paused → cancelled (final)."""

    __tablename__ = "source_list_schedules"

    source_list_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    workspace: Mapped[str] = mapped_column(String(100), index=True)
    update_frequency: Mapped[str] = mapped_column(String(40))
    every_s: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(20), default="active")  # active | paused | cancelled
    next_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_run_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class SourceListRun(Base):
    """One run of a source list: scheduled → running → completed | failed."""

    __tablename__ = "source_list_runs"

    run_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    source_list_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), index=True
    )
    trigger: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20))  # scheduled | running | completed | failed
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    sources: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int | None] = mapped_column(Integer)
    stop_reason: Mapped[str | None] = mapped_column(String(40))
    error: Mapped[str | None] = mapped_column(Text)


class SourceListAction(Base):
    """A user's per-source choice on a list: removed (never listed again) or preferred (kept)."""

    __tablename__ = "source_list_actions"

    source_list_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True
    )
    source_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    action: Mapped[str] = mapped_column(String(20))  # removed | preferred
    stored: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)  # the source as last listed
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class SourceListIteration(Base):
    """One step of a source list's refinement loop: its query, counts and memo."""

    __tablename__ = "source_list_iterations"

    run_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    iteration: Mapped[int] = mapped_column(Integer, primary_key=True)
    query: Mapped[str] = mapped_column(Text)
    counts: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    memo: Mapped[str] = mapped_column(Text, default="")
    stop_reason: Mapped[str | None] = mapped_column(String(40))


class SourceListJudgement(Base):
    """The relevance label one iteration gave one candidate source."""

    __tablename__ = "source_list_judgements"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(128), index=True)
    iteration: Mapped[int] = mapped_column(Integer)
    source_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    origin_id: Mapped[str] = mapped_column(String(300))
    title: Mapped[str] = mapped_column(Text)
    label: Mapped[str] = mapped_column(String(20))
    confidence: Mapped[float] = mapped_column(Float)
    rationale: Mapped[str] = mapped_column(Text)


class SourceListLimitsRow(Base):
    """One workspace's source-list limits (`research_ledger.source_limits`; the `default` workspace is
    created by migration 0005)."""

    __tablename__ = "source_list_limits"

    workspace: Mapped[str] = mapped_column(String(100), primary_key=True)
    max_references: Mapped[int] = mapped_column(Integer)
    allowed_source_types: Mapped[list[str]] = mapped_column(ARRAY(String(20)))
    allowed_apis: Mapped[list[str]] = mapped_column(ARRAY(String(40)))
    max_scheduled_lists: Mapped[int] = mapped_column(Integer)
    min_update_interval_s: Mapped[int] = mapped_column(Integer)
    detail_level_ceiling: Mapped[str] = mapped_column(String(30))
    default_language: Mapped[str] = mapped_column(String(35))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


# --- what one key may ask, and the console's sign-ins (migration 0015) ---------------------------


class KeyLimitsRow(Base):
    """An admin's override of one key's quotas; a null column keeps the setting's default."""

    __tablename__ = "key_limits"

    key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("api_keys.id", ondelete="CASCADE"), primary_key=True
    )
    runs_in_flight: Mapped[int | None] = mapped_column(Integer)
    submissions_per_hour: Mapped[int | None] = mapped_column(Integer)
    watched_claims: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = _now()


class KeySubmission(Base):
    """One expensive submission of a key (`research_gateway.quotas`): counted for an hour, and
    holding one of the key's run slots until its run ends (`released_at`)."""

    __tablename__ = "key_submissions"
    __table_args__ = (
        Index("ix_key_submissions_recent", "key_id", "submitted_at"),
        Index(
            "ix_key_submissions_in_flight",
            "key_id",
            "kind",
            postgresql_where=text("released_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    key_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    kind: Mapped[str] = mapped_column(
        String(20)
    )  # review | verification | source_list | task | pdf_export
    subject_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))  # report or task id
    run_id: Mapped[str | None] = mapped_column(String(128))
    watch: Mapped[bool] = mapped_column(Boolean, default=False)
    submitted_at: Mapped[datetime] = _now()
    released_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class KeyWorkspace(Base):
    """A workspace a researcher key may name (admin-managed; a key with no row has `default`)."""

    __tablename__ = "key_workspaces"

    key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("api_keys.id", ondelete="CASCADE"), primary_key=True
    )
    workspace: Mapped[str] = mapped_column(String(100), primary_key=True)


class AuthFailure(Base):
    """One failed key check of a source (a digest of an address or of a presented key's prefix),
    read by every gateway replica (`research_gateway.throttle`)."""

    __tablename__ = "auth_failures"
    __table_args__ = (Index("ix_auth_failures_source", "source", "failed_at"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(64))
    failed_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), index=True
    )


class ConsoleSession(Base):
    """A signed-in browser: the cookie holds the session id, this row only its SHA-256."""

    __tablename__ = "console_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("api_keys.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = _now()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ConsoleCode(Base):
    """A single-use sign-in code (`research-engine up` prints it in the console URL): its SHA-256,
    whose key it signs in, when it expires and when it was spent."""

    __tablename__ = "console_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    spent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
