"""What the gateway answers, as typed models (the shapes of its OpenAPI document).

The request and event models are the shared contracts (`research_contracts`); the views below
mirror the gateway's response schemas. They accept fields a newer gateway adds
(`extra="allow"`), so an older client keeps working; tests/client checks every field named
here against the live gateway's OpenAPI document.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from research_contracts import ControlReply, SourceHit, Support
from research_contracts.runs import RunEvent

__all__ = [
    "AuditEntry",
    "Claim",
    "ControlReply",
    "Finding",
    "ModeAccepted",
    "RunEventItem",
    "SearchResults",
    "Task",
    "TaskAccepted",
    "Verdict",
]

TERMINAL_CLAIM = frozenset({"active", "rejected", "superseded", "critic_quarantine"})


class _View(BaseModel):
    model_config = ConfigDict(extra="allow")


class TaskAccepted(_View):
    task_id: uuid.UUID
    status: str


class Verdict(_View):
    verdict: str
    score: float
    reasoning: str
    model: str
    decided_at: datetime


class Claim(_View):
    claim_id: uuid.UUID
    task_id: uuid.UUID | None
    entity: str
    question: str
    statement: str
    status: str
    confidence: float
    supports: list[Support]
    supersedes: list[uuid.UUID]
    superseded_by: uuid.UUID | None
    model: str
    created_at: datetime
    decided_at: datetime | None
    verdict: Verdict | None = None

    @property
    def decided(self) -> bool:
        return self.status in TERMINAL_CLAIM


class Task(_View):
    task_id: uuid.UUID
    question: str
    entity: str | None
    tier: str
    status: str
    origin: str
    error: str | None
    created_at: datetime
    claim: Claim | None = None

    @property
    def finished(self) -> bool:
        """A decided claim, or a task that failed (dead-lettered, no provider answered…)."""
        return self.status == "failed" or (self.claim is not None and self.claim.decided)


class Finding(_View):
    finding_id: uuid.UUID
    agent: str
    kind: str
    claim_ids: list[uuid.UUID]
    payload: dict[str, Any]
    created_at: datetime
    expires_at: datetime
    resolved_at: datetime | None


class AuditEntry(_View):
    id: int
    occurred_at: datetime
    service: str
    action: str
    task_id: uuid.UUID | None
    claim_id: uuid.UUID | None
    subject_ids: dict[str, Any]
    payload: dict[str, Any]


class SearchResults(_View):
    query: str
    mode: str
    hits: list[SourceHit]


class ModeAccepted(_View):
    """`202` of a mode request (review, verification, source list): its id and the run to watch."""

    run_id: str

    @property
    def id(self) -> str:
        """The mode's own id (`review_id`, `verification_id`, `source_list_id`…)."""
        for name, value in (self.model_extra or {}).items():
            if name.endswith("_id") and value:
                return str(value)
        return self.run_id


class RunEventItem(BaseModel):
    """One event of a run's SSE stream: `id` is what a reconnect resumes after."""

    id: int | None
    event: RunEvent
