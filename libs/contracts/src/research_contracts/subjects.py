"""Every NATS subject, stream and durable consumer name of research-engine, in one place.

Subjects are lowercase dotted tokens. JetStream streams hold the work that must survive a
crash (tasks, claims, dead letters); request/reply subjects (connector search, researcher
re-run, control verbs) are core NATS with queue groups so replicas share the load.
"""

from __future__ import annotations

from typing import Final

# --- research tasks (JetStream stream RESEARCH_TASKS) -------------------------------------
TASKS_STREAM: Final = "RESEARCH_TASKS"
TASK_SUBJECTS: Final = ("research.task.*",)


def task_subject(tier: str) -> str:
    """The subject a task of `tier` (emergency | priority | batched) is published on."""
    return f"research.task.{tier}"


# --- claims (JetStream stream RESEARCH_CLAIMS) -------------------------------------------
CLAIMS_STREAM: Final = "RESEARCH_CLAIMS"
CLAIM_PENDING: Final = "research.claim.pending"
CLAIM_RECRITIQUE: Final = "research.claim.recritique"
CLAIM_DECIDED: Final = "research.claim.decided"
# SourcesRetracted: cited works retracted (replicator consumes); kept beside the claims it undermines
SOURCE_RETRACTED: Final = "research.source.retracted"
CLAIM_SUBJECTS: Final = ("research.claim.*", SOURCE_RETRACTED)

# --- source lists (JetStream stream RESEARCH_SOURCELISTS) --------------------------------
SOURCELISTS_STREAM: Final = "RESEARCH_SOURCELISTS"
SOURCELIST_REQUESTED: Final = "research.sourcelist.requested"  # RequestSourceList (scout consumes)
SOURCELIST_UPDATED: Final = "research.sourcelist.updated"  # SourceListUpdated (for subscribers)
SOURCELIST_SUBJECTS: Final = ("research.sourcelist.*",)
SCOUT_REQUESTS_DURABLE: Final = "scout-requests"

# --- literature reviews (JetStream stream RESEARCH_REVIEWS) -----------------------------
REVIEWS_STREAM: Final = "RESEARCH_REVIEWS"
REVIEW_REQUESTED: Final = "research.review.requested"  # RequestReview (reviewer consumes)
REVIEW_COMPLETED: Final = "research.review.completed"  # ReviewCompleted (for subscribers)
REVIEW_SUBJECTS: Final = ("research.review.*",)
REVIEWER_REQUESTS_DURABLE: Final = "reviewer-requests"
REVIEWER_DECISIONS_DURABLE: Final = (
    "reviewer-claim-decisions"  # research.claim.decided → stale sweep
)

# --- claim verification (JetStream stream RESEARCH_VERIFICATIONS) ------------------------
VERIFICATIONS_STREAM: Final = "RESEARCH_VERIFICATIONS"
VERIFY_REQUESTED: Final = "research.verify.requested"  # RequestVerification (verifier consumes)
VERIFICATION_CHANGED: Final = (
    "research.verification.changed"  # VerificationChanged (watched claims)
)
VERIFY_SUBJECTS: Final = ("research.verify.*", "research.verification.*")
VERIFIER_REQUESTS_DURABLE: Final = "verifier-requests"

# --- corpus ingest jobs (JetStream work-queue stream RESEARCH_INGEST) ---------------------
# `corpus ingest --workers N | --bus` publishes one job per paper on `research.ingest.paper.<run>`;
# every ingest worker (`research-engine corpus worker`, on any machine) pulls from the one durable
# consumer, so each job goes to one worker; an acknowledged job is deleted (work-queue retention).
# Workers report each batch on core NATS `research.ingest.done.<run>` (progress, not a record).
INGEST_STREAM: Final = "RESEARCH_INGEST"
INGEST_SUBJECTS: Final = ("research.ingest.paper.*",)
INGEST_WORKERS_DURABLE: Final = "ingest-workers"


def ingest_job_subject(run_id: str) -> str:
    """Where the jobs (one paper each) of ingest run `run_id` are queued."""
    return f"research.ingest.paper.{run_id}"


def ingest_done_subject(run_id: str) -> str:
    """Core NATS subject on which workers report the batches of run `run_id` they have written."""
    return f"research.ingest.done.{run_id}"


# --- commands: what a person asked for, deleted from its stream once settled ----------------
# A command carries a person's (de-identified) words; once its consumer has acknowledged it, or
# parked it on the dead-letter stream, it is deleted from its stream (`Delivery`): a consumed
# command does not outlive its processing. Events (claims, changes) keep the streams' age limits.
COMMAND_PREFIXES: Final = (
    "research.task.",
    REVIEW_REQUESTED,
    VERIFY_REQUESTED,
    SOURCELIST_REQUESTED,
)


def is_command(subject: str) -> bool:
    """True for the subjects whose messages are a person's request (tasks, reviews, verifications, source lists)."""
    return subject.startswith(COMMAND_PREFIXES)


# --- dead letters (JetStream stream RESEARCH_DLQ) ----------------------------------------
DEAD_LETTER_STREAM: Final = "RESEARCH_DLQ"
DEAD_LETTER_PREFIX: Final = "research.deadletter"
DEAD_LETTER_SUBJECTS: Final = ("research.deadletter.>",)


def dead_letter_subject(original_subject: str) -> str:
    """Where a terminated message from `original_subject` is parked for an operator."""
    return f"{DEAD_LETTER_PREFIX}.{original_subject}"


# --- request/reply (core NATS, queue groups) ---------------------------------------------
CONNECTOR_SEARCH: Final = "research.connector.search"
CONNECTOR_QUEUE: Final = "connector"


def connector_source_subject(source: str) -> str:
    """Direct request/reply subject of one evidence source (`corpus`, `pubmed`, …)."""
    return f"research.connector.source.{source}"


def corpus_tool_subject(tool: str) -> str:
    """Request/reply subject of one corpus tool of the connector (`search_papers`, `get_paper`, …)."""
    return f"research.connector.corpus.{tool}"


RESEARCHER_RERUN: Final = "research.researcher.rerun"
RESEARCHER_QUEUE: Final = "researcher"


def control_subject(agent: str, verb: str) -> str:
    """Admin control verb of a periodic agent: status, run-once, cancel-current, pause, resume."""
    return f"research.control.{agent}.{verb}"


PERIODIC_AGENTS: Final = ("correlator", "replicator", "librarian")
CONTROL_VERBS: Final = ("status", "run-once", "cancel-current", "pause", "resume")
# The critic's operator verb: release claims from `critic_quarantine` back to judgement.
CRITIC_DRAIN: Final = "research.control.critic.drain"
CRITIC_QUEUE: Final = "critic"


# --- durable consumers -------------------------------------------------------------------
RESEARCHER_DURABLES: Final = {
    "emergency": "researcher-emergency",
    "priority": "researcher-priority",
    "batched": "researcher-batched",
}
CRITIC_PENDING_DURABLE: Final = "critic-pending"
CRITIC_RECRITIQUE_DURABLE: Final = "critic-recritique"
REPLICATOR_RETRACTIONS_DURABLE: Final = "replicator-retractions"

# Header carrying the JetStream de-duplication id (see `Nats-Msg-Id` in the NATS docs).
MSG_ID_HEADER: Final = "Nats-Msg-Id"

# How long a publish waits for JetStream's ack. FastStream's default (0.5 s) is missed by a server
# that is busy for a moment (its cores shared, a write flushed): `bench:sourcelist` beside the test
# suite had 12 of 102 requests answered 503 "the bus is unavailable" with the server up. Every
# publish carries a `Nats-Msg-Id`, so one retried after a late ack is stored once.
PUBLISH_TIMEOUT_S: Final = 5.0
