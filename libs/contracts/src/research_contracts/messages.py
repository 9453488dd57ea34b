"""Message contracts carried on the bus. Commands are imperative, events past tense.

These pydantic models are the wire format: FastStream validates every consumed message
against them and publishes them as JSON, and the AsyncAPI document is generated from them.
"""

from __future__ import annotations

import datetime as dt
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from research_privacy import Deidentified, outbound_query
from research_privacy.boundary import person_text


class Tier(StrEnum):
    """Priority tier of a research task; emergency work is always drained first."""

    emergency = "emergency"
    priority = "priority"
    batched = "batched"


class TaskFilters(BaseModel):
    """Optional restrictions on the evidence gathered for a task."""

    model_config = ConfigDict(extra="forbid")

    year_from: int | None = Field(
        default=None, description="Earliest publication year.", examples=[2015]
    )
    year_to: int | None = Field(
        default=None, description="Latest publication year.", examples=[2024]
    )
    date_from: dt.date | None = Field(
        default=None, description="Earliest publication date (sources that take dates)."
    )
    date_to: dt.date | None = Field(
        default=None, description="Latest publication date (sources that take dates)."
    )
    sources: list[str] = Field(
        default_factory=list,
        description="Evidence sources to ask (empty = the configured default).",
        examples=[["corpus", "pubmed"]],
    )


class RunResearch(BaseModel):
    """Command: research a question and propose a claim (published on `research.task.<tier>`)."""

    model_config = ConfigDict(extra="forbid")

    task_id: uuid.UUID = Field(
        default_factory=uuid.uuid4, description="Idempotency key of the task."
    )
    question: str = Field(
        min_length=3,
        max_length=2000,
        description="The research question, in plain language.",
        examples=["Does vitamin D supplementation reduce fracture risk?"],
    )
    entity: str | None = Field(
        default=None,
        max_length=200,
        description="What the claim is about; claims of one entity supersede each other.",
        examples=["vitamin D"],
    )
    patient_context: str | None = Field(
        default=None,
        max_length=2000,
        description="De-identified patient context (identifiers replaced by placeholders such as [NAME_1]). "
        "A `patient_ref` sent by a client is turned into this when the command is parsed and never kept.",
    )
    tier: Tier = Field(default=Tier.priority, description="Priority tier.")
    source_types: list[str] = Field(
        default_factory=list,
        description="Kinds of source wanted (trial, review, guideline…).",
        examples=[["review"]],
    )
    filters: TaskFilters = Field(default_factory=TaskFilters)
    origin: str = Field(
        default="api", max_length=100, description="Who submitted it (api, replicator, cli…)."
    )

    @model_validator(mode="before")
    @classmethod
    def _patient_ref_becomes_context(cls, data: object) -> object:
        """`patient_ref` (free text that may name the patient) is never kept: it becomes `patient_context`."""
        if isinstance(data, dict) and "patient_ref" in data:
            data = dict(data)
            raw = data.pop("patient_ref")
            if raw and not data.get("patient_context"):
                data["patient_context"] = str(raw)[:500]
        return data

    @model_validator(mode="after")
    def _deidentified(self) -> RunResearch:
        """The privacy boundary (research_privacy.boundary): one placeholder table for the whole task."""
        table = Deidentified(text="")
        self.question = person_text(self.question, into=table)
        if self.patient_context:
            self.patient_context = person_text(self.patient_context, into=table)
        if self.entity:
            self.entity = person_text(self.entity, into=table)
        return self


# The name the product specification uses for the same command.
ResearchTask = RunResearch


class SourceHit(BaseModel):
    """One piece of evidence returned by a source, with a source-prefixed id."""

    source_id: str = Field(
        description="Source-prefixed id.", examples=["pmid:22351513", "corpus:4983"]
    )
    source: str = Field(description="Which connector produced it.", examples=["corpus"])
    title: str = ""
    authors: list[str] = Field(default_factory=list)
    venue: str | None = None
    year: int | None = None
    date: dt.date | None = None
    url: str | None = None
    abstract: str = Field(
        default="", description="Abstract or snippet text, as the source gave it."
    )
    score: float | None = Field(default=None, description="The source's relevance score, if any.")
    locator: str | None = Field(default=None, description="Where in the document the snippet sits.")
    doi: str | None = None
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Structured metadata: publication_types, retracted, trial phase/status, …",
    )


class SearchEvidence(BaseModel):
    """Request (request/reply on `research.connector.search`): ask sources for evidence."""

    query: str = Field(min_length=1, max_length=1000, examples=["vitamin D fracture"])
    sources: list[str] = Field(default_factory=lambda: ["corpus"], examples=[["corpus", "pubmed"]])
    limit: int = Field(default=10, ge=1, le=200)
    filters: TaskFilters = Field(default_factory=TaskFilters)
    mode: Literal["hybrid", "lexical", "dense"] = Field(
        default="hybrid", description="Corpus retrieval mode."
    )
    deadline_s: float = Field(
        default=10.0, gt=0, le=120, description="Per-source deadline in seconds."
    )
    query_embedding: list[float] | None = Field(
        default=None,
        min_length=384,
        max_length=384,
        description="The query's all-MiniLM-L6-v2 vector when the asker already has it (the corpus "
        "search then reuses it instead of embedding the query again).",
    )

    @model_validator(mode="after")
    def _outbound(self) -> SearchEvidence:
        """A query that goes to an outside source is built by allow-list (`research_privacy.outbound_query`):
        only terms of the scientific vocabulary leave, so placeholders such as [NAME_1] and any name a
        pattern missed stay home — whichever mode asks. The local corpus alone gets the query as given."""
        if set(self.sources) - {"corpus"}:
            self.query = (
                outbound_query(self.query) or self.query
            )  # nothing left: the connector refuses it
        return self


class EvidenceFound(BaseModel):
    """Reply to `SearchEvidence`: merged, de-duplicated hits plus the sources that degraded."""

    hits: list[SourceHit] = Field(default_factory=list)
    degraded: dict[str, str] = Field(
        default_factory=dict, description="source → reason it returned nothing."
    )
    facets: dict[str, dict[str, dict[str, int]]] = Field(
        default_factory=dict,
        description="source → counts it reports next to its hits (e.g. cochrane → review_type → n).",
        examples=[{"cochrane": {"review_type": {"intervention": 3, "diagnostic": 1}}}],
    )
    error: str | None = Field(default=None, description="Set when the request itself was refused.")


class Support(BaseModel):
    """One citation backing a claim: the quote must occur in the cited source's text."""

    source_id: str = Field(examples=["corpus:4983"])
    title: str = ""
    quote: str = Field(min_length=1)
    locator: str | None = Field(default=None, examples=["abstract sentence 3"])


class ClaimStatus(StrEnum):
    pending = "pending"
    active = "active"
    superseded = "superseded"
    rejected = "rejected"
    critic_quarantine = "critic_quarantine"


class ClaimProposed(BaseModel):
    """Event on `research.claim.pending`: the researcher persisted a pending claim."""

    claim_id: uuid.UUID
    task_id: uuid.UUID | None = None
    entity: str
    statement: str

    def msg_id(self) -> str:
        """Its JetStream message id: announcing the same claim again within the duplicate window is a
        no-op (a redelivered task or review re-announces without a second critique). An operator's
        drain of the quarantine publishes under its own id, so that a released claim is judged again."""
        return f"claim-proposed-{self.claim_id}"


class RecritiqueClaim(BaseModel):
    """Command on `research.claim.recritique`: judge an active claim again (from the replicator)."""

    claim_id: uuid.UUID = Field(description="The active claim to judge again.")
    reason: str = Field(
        description="Why it no longer holds: the replicator's verdict on fresh evidence.",
        examples=["eroded", "retracted_source"],
    )
    finding_id: uuid.UUID | None = Field(
        default=None, description="The replicator's finding that records the evidence."
    )


class SourcesRetracted(BaseModel):
    """Event on `research.source.retracted`: cited sources are retracted (a CrossRef / Retraction
    Watch notice, a PubMed retracted record, a re-run's fresh hit). The replicator marks the ledger's
    sources retracted, records a `retracted_source` finding on every active claim citing one, marks
    every completed report citing one stale with the reason and makes the watched claims among them
    due at once. Publishing one here is a supported interface (`Nats-Msg-Id` `msg_id()`)."""

    event_id: uuid.UUID = Field(default_factory=uuid.uuid4)
    source_ids: list[str] = Field(
        min_length=1,
        max_length=1000,
        description="Source-prefixed ids of the retracted works (`doi:10.…`, `pubmed:…`).",
    )
    origin: str = Field(
        default="crossref",
        max_length=50,
        description="Who reported it: crossref | pubmed | retraction_watch | replicator | operator.",
    )
    notice: str = Field(
        default="", max_length=500, description="The retraction notice (a DOI or URL), if known."
    )

    def msg_id(self) -> str:
        return f"sources-retracted-{self.event_id}"


class Verdict(StrEnum):
    promote = "promote"
    supersede = "supersede"
    reject = "reject"


class CriticVerdict(BaseModel):
    """The critic's judgement of a pending claim."""

    verdict: Verdict
    score: float = Field(ge=0.0, le=1.0)
    reasoning: str
    supersedes: list[uuid.UUID] = Field(default_factory=list)
    model: str = Field(
        default="offline-critic", description="Which provider/model produced the verdict."
    )


class ClaimDecided(BaseModel):
    """Event on `research.claim.decided`: a claim reached a new status."""

    claim_id: uuid.UUID
    task_id: uuid.UUID | None = None
    status: ClaimStatus
    verdict: Verdict | None = None
    score: float | None = None
    supersedes: list[uuid.UUID] = Field(default_factory=list)
    decided_at: datetime


class ControlRequest(BaseModel):
    """Request on `research.control.<agent>.<verb>` from the gateway's admin routes."""

    actor_key_id: str | None = Field(
        default=None, description="Id (never the secret) of the operator's API key."
    )
    args: dict[str, Any] = Field(default_factory=dict)


class ControlReply(BaseModel):
    """Reply to a control request; `status` mirrors the HTTP status the gateway returns."""

    status: int = 200
    state: Literal["running", "paused", "idle", "stopped"] | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class RerunResearch(BaseModel):
    """Request (request/reply on `research.researcher.rerun`): gather fresh evidence for an aged claim.

    The replicator sends it for an active claim older than its re-check age; the researcher
    answers with `EvidenceRefreshed` and never writes to the ledger for it.
    """

    model_config = ConfigDict(extra="forbid")

    claim_id: uuid.UUID = Field(description="The claim being re-checked (for logs and audit).")
    question: str = Field(
        min_length=3,
        max_length=2000,
        description="The claim's original research question.",
        examples=["Does vitamin D supplementation reduce fracture risk?"],
    )
    entity: str | None = Field(default=None, max_length=200, examples=["vitamin D"])
    sources: list[str] = Field(
        default_factory=list,
        description="Evidence sources to ask (empty = the researcher's configured default).",
        examples=[["corpus", "pubmed"]],
    )
    limit: int = Field(default=10, ge=1, le=200, description="How many hits to gather at most.")


class EvidenceRefreshed(BaseModel):
    """Reply to `RerunResearch`: the fresh evidence the researcher found for the question today."""

    claim_id: uuid.UUID | None = Field(
        default=None, description="Echo of the request's claim (None if unreadable)."
    )
    hits: list[SourceHit] = Field(default_factory=list)
    degraded: dict[str, str] = Field(
        default_factory=dict, description="source → reason it returned nothing."
    )
    error: str | None = Field(default=None, description="Set when the re-run itself failed.")
