"""The audit catalogue: every action the engine writes to `audit_events`, with its payload schema.

Audit actions are data, not strings scattered in code. `AuditAction` is the only way to name
an action (the writer in `research_ledger.audit` refuses anything else), and `PAYLOADS` maps
each action to the pydantic model its payload must satisfy. Schemas name the fields readers
(Grafana, the `/audit` route, the replicator's "recently checked" query) rely on; most allow
extra fields because some payloads merge open-ended details (a comparison, provenance).

Payloads never carry raw message bodies or query texts: a body is described by its SHA-256,
its size and the reason (`consumer.dead_letter`), a refused query by the *kinds* of identifiers.
`tests/ledger/test_audit_catalogue.py` fails when code writes an action outside this module.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class AuditAction(StrEnum):
    """Every audit action, by the service area that writes it."""

    # transport (any consumer)
    CONSUMER_DEAD_LETTER = "consumer.dead_letter"
    CONSUMER_RETRIEVAL_FALLBACK = "consumer.retrieval_fallback"
    # connector
    CONNECTOR_DEGRADED = "connector.degraded"
    CONNECTOR_PHI_REFUSED = "connector.phi_refused"
    CONNECTOR_CIRCUIT_OPENED = "connector.circuit_opened"
    CONNECTOR_CIRCUIT_CLOSED = "connector.circuit_closed"
    # task lifecycle
    TASK_SUBMITTED = "research.task.submitted"
    TASK_STARTED = "research.task.started"
    TASK_FAILED = "research.task.failed"
    # claim lifecycle
    CLAIM_PROPOSED = "research.claim.proposed"
    CLAIM_PROMOTED = "research.claim.promoted"
    CLAIM_SUPERSEDED = "research.claim.superseded"
    CLAIM_REJECTED = "research.claim.rejected"
    LLM_PROVIDER_FAILED = "research.llm.provider_failed"
    # critic
    CRITIC_TIMEOUT = "research.critic.timeout"
    CRITIC_QUARANTINE = "research.critic.quarantine"
    CRITIC_DRAINED = "research.critic.drained"
    CRITIC_RECRITIQUE = "research.critic.recritique"
    # periodic agents
    CORRELATOR_FINDING = "research.correlator.finding"
    CORRELATOR_NO_PATTERN = "research.correlator.no_pattern"
    CORRELATOR_RESOLVED = "research.correlator.resolved"
    REPLICATOR_FINDING = "research.replicator.finding"
    REPLICATOR_CONFIRMED = "research.replicator.confirmed"
    REPLICATOR_SKIPPED = "research.replicator.skipped"
    LIBRARIAN_FINDING = "research.librarian.finding"
    LIBRARIAN_RESOLVED = "research.librarian.resolved"
    # operators
    ADMIN_KEY_CREATED = "research.admin.key_created"
    ADMIN_KEY_REVOKED = "research.admin.key_revoked"
    ADMIN_DENIED = "research.admin.denied"
    ADMIN_CONTROL = "research.admin.control"
    ADMIN_KEY_LIMITS_SET = "research.admin.key_limits_set"
    ADMIN_KEY_WORKSPACES_SET = "research.admin.key_workspaces_set"
    # reports of the modes (review, verification, source_list): `kind` in every payload
    REPORT_OPENED = "research.report.opened"
    REPORT_VERSION_SAVED = "research.report.version_saved"
    REPORT_COMPLETED = "research.report.completed"
    REPORT_FAILED = "research.report.failed"
    REPORT_STALE = "research.report.stale"
    REPORT_REFRESH_REQUESTED = "research.report.refresh_requested"
    REPORT_SOURCES_DOWN = "research.report.sources_down"
    # literature review
    REVIEW_VERDICT = "research.review.verdict"
    # source lists (scout)
    SOURCELIST_LIMITS_CHANGED = "research.sourcelist.limits_changed"
    SOURCELIST_SCHEDULE_CHANGED = "research.sourcelist.schedule_changed"
    SOURCELIST_SOURCE_MARKED = "research.sourcelist.source_marked"
    SOURCELIST_RUN_FINISHED = "research.sourcelist.run_finished"
    # claim verification (verifier)
    VERIFICATION_COMPLETED = "research.verification.completed"
    VERIFICATION_VERDICT_CHANGED = "research.verification.verdict_changed"


class Payload(BaseModel):
    """Base of the open schemas: named fields are checked, extra details are kept."""

    model_config = ConfigDict(extra="allow")


class ClosedPayload(BaseModel):
    """Base of the closed schemas: nothing beyond the named fields may be stored."""

    model_config = ConfigDict(extra="forbid")


class DeadLettered(ClosedPayload):
    reason: str
    sha256: str = Field(
        description="SHA-256 of the message body (the body itself stays on the dead-letter stream)."
    )
    size: int = Field(ge=0, description="Body size in bytes.")
    subject: str | None = None
    delivered: int | None = Field(default=None, description="Delivery attempts so far.")


class RetrievalFallback(ClosedPayload):
    reason: str
    sources: list[str]


class SourceDegraded(ClosedPayload):
    source: str
    reason: str
    operation: str = "search"
    detail: str = ""


class PhiRefused(ClosedPayload):
    source: str
    kinds: list[str]


class CircuitOpened(ClosedPayload):
    source: str
    previous: str  # closed (threshold reached) or half_open (the probe failed)
    failures: int
    reason: str
    cooldown_s: float


class CircuitClosed(ClosedPayload):
    source: str
    previous: str


class TaskSubmitted(ClosedPayload):
    tier: str
    idempotency_key: str | None = Field(
        default=None, description="Digest and size of the client's `Idempotency-Key`."
    )


class TaskStarted(ClosedPayload):
    tier: str
    waited_s: float = 0.0


class TaskFailed(ClosedPayload):
    reason: str
    previous_status: str | None = None


class ClaimProposedPayload(Payload):
    entity: str
    model: str
    supports: int
    dropped_supports: int


class ClaimJudged(Payload):
    verdict: str
    score: float
    model: str | None = None
    recritique: bool = False


class ClaimSuperseded(ClosedPayload):
    at: str


class ProviderFailed(ClosedPayload):
    provider: str
    model: str
    reason: str
    status: int | None = None


class CriticTimeout(ClosedPayload):
    timeouts: int
    sla_s: float
    status: str


class CriticQuarantined(ClosedPayload):
    timeouts: int
    sla_s: float
    previous_status: str


class CriticDrained(ClosedPayload):
    status: str


class Recritiqued(ClosedPayload):
    reason: str
    verdict: str
    score: float
    model: str
    outcome: str
    discredited_sources: list[str]


class FindingOpened(Payload):
    kind: str


class CorrelatorFinding(ClosedPayload):
    kind: str
    score: float | None = None
    model: str | None = None


class NoPattern(Payload):
    entity: str
    claims: int
    model: str | None = None


class FindingResolved(Payload):
    kind: str
    now: str


class ReplicationChecked(Payload):
    """Open: the comparison's details (cited, retracted, lost, share…) are merged in."""


class ReplicationSkipped(Payload):
    reason: str


class ReplicationFinding(Payload):
    verdict: str


class KeyCreated(ClosedPayload):
    role: str
    name: str = Field(
        default="", description="Digest and size of the key's label (it may name a person)."
    )


class KeyRevoked(ClosedPayload):
    pass


class AdminDenied(ClosedPayload):
    role: str
    path: str
    method: str


class KeyLimitsSet(ClosedPayload):
    overrides: dict[str, int | None] = Field(
        description="The key's quota overrides after the change (null = the default)."
    )


class KeyWorkspacesSet(ClosedPayload):
    workspaces: list[str]


class AdminControl(ClosedPayload):
    status: int
    args: dict[str, Any] = Field(default_factory=dict)
    state: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class ReportOpened(ClosedPayload):
    kind: str
    run_id: str
    subject_key: str


class ReportVersionSaved(Payload):
    """Open: a mode may add its own counts (tags, dropped fabrications…)."""

    kind: str
    version: int
    run_id: str
    claims: int = 0
    citation_ok: bool | None = None
    changes: dict[str, int] = Field(
        default_factory=dict, description="Diff counts against the previous version."
    )


class ReportCompleted(Payload):
    kind: str
    version: int
    outcome: str | None = Field(
        default=None, description="The mode's verdict (PASS, REVISION_NEEDED, …)."
    )


class VerificationCompleted(ClosedPayload):
    verdict: str
    confidence: str
    duration_s: float = Field(ge=0)
    run_id: str
    statements: int = Field(ge=1)
    judge: str = ""  # the judge's version (model and rule set) that gave the verdict


class VerificationVerdictChanged(ClosedPayload):
    previous: str
    verdict: str
    previous_confidence: str
    confidence: str
    run_id: str
    retracted_sources: list[str] = Field(default_factory=list)
    cause: str = "evidence"  # `judge` when another judge gave the new verdict


class ReportFailed(ClosedPayload):
    kind: str
    reason: str
    previous_status: str


class ReportStale(ClosedPayload):
    kind: str
    reason: str
    version: int


class ReportRefreshRequested(ClosedPayload):
    kind: str
    run_id: str
    previous_status: str
    version: int


class ReviewVerdict(ClosedPayload):
    iteration: int
    verdict: str
    critical: int
    major: int
    minor: int
    missed_papers: int = 0
    run_id: str


class SourceListLimitsChanged(ClosedPayload):
    workspace: str
    previous: dict[str, Any]
    limits: dict[str, Any]


class SourceListScheduleChanged(ClosedPayload):
    action: str = Field(description="set | pause | resume | cancel | modify")
    status: str
    update_frequency: str | None = None
    next_run_at: str | None = None


class ReportSourcesDown(ClosedPayload):
    kind: str
    run_id: str
    sources: dict[str, str] = Field(
        description="source → why it gave nothing (the connector's or the client's reason)"
    )
    all_down: bool = False


class SourceListSourceMarked(ClosedPayload):
    source_id: str
    action: str = Field(description="removed | preferred | unpreferred")


class SourceListRunFinished(ClosedPayload):
    run_id: str
    status: str
    trigger: str
    sources: int = 0
    version: int | None = None
    iterations: int = 0
    stop_reason: str | None = None
    dropped_facts: int = 0
    new: int = 0
    changed: int = 0
    dropped: int = 0
    error: str | None = None


PAYLOADS: dict[AuditAction, type[BaseModel]] = {
    AuditAction.CONSUMER_DEAD_LETTER: DeadLettered,
    AuditAction.CONSUMER_RETRIEVAL_FALLBACK: RetrievalFallback,
    AuditAction.CONNECTOR_DEGRADED: SourceDegraded,
    AuditAction.CONNECTOR_PHI_REFUSED: PhiRefused,
    AuditAction.CONNECTOR_CIRCUIT_OPENED: CircuitOpened,
    AuditAction.CONNECTOR_CIRCUIT_CLOSED: CircuitClosed,
    AuditAction.TASK_SUBMITTED: TaskSubmitted,
    AuditAction.TASK_STARTED: TaskStarted,
    AuditAction.TASK_FAILED: TaskFailed,
    AuditAction.CLAIM_PROPOSED: ClaimProposedPayload,
    AuditAction.CLAIM_PROMOTED: ClaimJudged,
    AuditAction.CLAIM_SUPERSEDED: ClaimSuperseded,
    AuditAction.CLAIM_REJECTED: ClaimJudged,
    AuditAction.LLM_PROVIDER_FAILED: ProviderFailed,
    AuditAction.CRITIC_TIMEOUT: CriticTimeout,
    AuditAction.CRITIC_QUARANTINE: CriticQuarantined,
    AuditAction.CRITIC_DRAINED: CriticDrained,
    AuditAction.CRITIC_RECRITIQUE: Recritiqued,
    AuditAction.CORRELATOR_FINDING: CorrelatorFinding,
    AuditAction.CORRELATOR_NO_PATTERN: NoPattern,
    AuditAction.CORRELATOR_RESOLVED: FindingResolved,
    AuditAction.REPLICATOR_FINDING: ReplicationFinding,
    AuditAction.REPLICATOR_CONFIRMED: ReplicationChecked,
    AuditAction.REPLICATOR_SKIPPED: ReplicationSkipped,
    AuditAction.LIBRARIAN_FINDING: FindingOpened,
    AuditAction.LIBRARIAN_RESOLVED: FindingResolved,
    AuditAction.ADMIN_KEY_CREATED: KeyCreated,
    AuditAction.ADMIN_KEY_REVOKED: KeyRevoked,
    AuditAction.ADMIN_DENIED: AdminDenied,
    AuditAction.ADMIN_CONTROL: AdminControl,
    AuditAction.ADMIN_KEY_LIMITS_SET: KeyLimitsSet,
    AuditAction.ADMIN_KEY_WORKSPACES_SET: KeyWorkspacesSet,
    AuditAction.REPORT_OPENED: ReportOpened,
    AuditAction.REPORT_VERSION_SAVED: ReportVersionSaved,
    AuditAction.REPORT_COMPLETED: ReportCompleted,
    AuditAction.REPORT_FAILED: ReportFailed,
    AuditAction.REPORT_STALE: ReportStale,
    AuditAction.REPORT_REFRESH_REQUESTED: ReportRefreshRequested,
    AuditAction.REPORT_SOURCES_DOWN: ReportSourcesDown,
    AuditAction.REVIEW_VERDICT: ReviewVerdict,
    AuditAction.SOURCELIST_LIMITS_CHANGED: SourceListLimitsChanged,
    AuditAction.SOURCELIST_SCHEDULE_CHANGED: SourceListScheduleChanged,
    AuditAction.SOURCELIST_SOURCE_MARKED: SourceListSourceMarked,
    AuditAction.SOURCELIST_RUN_FINISHED: SourceListRunFinished,
    AuditAction.VERIFICATION_COMPLETED: VerificationCompleted,
    AuditAction.VERIFICATION_VERDICT_CHANGED: VerificationVerdictChanged,
}


def payload_schema(action: AuditAction) -> type[BaseModel]:
    """The pydantic model a payload of `action` must satisfy."""
    return PAYLOADS[action]
