"""The gateway's response views, in one place: the gateway answers with them (its OpenAPI document
is generated from them) and the client (`research_client`) parses the answers with them.

The class names are the OpenAPI schema names (`ClaimView`, `TaskView`…), and a class docstring
would become a schema description: keep both as they are, or the published document changes
(tests/ops/test_docs_current.py). Fields a newer gateway adds are ignored by an older client.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from research_contracts.messages import SourceHit, Support

__all__ = [
    "TERMINAL_CLAIM",
    "AuditView",
    "ClaimView",
    "FindingView",
    "SearchResults",
    "TaskAccepted",
    "TaskView",
    "VerdictView",
]

# A claim in one of these states is decided: the critic (or the ledger) will not move it again.
TERMINAL_CLAIM = frozenset({"active", "rejected", "superseded", "critic_quarantine"})


class TaskAccepted(BaseModel):
    task_id: uuid.UUID
    status: str = "queued"


class VerdictView(BaseModel):
    verdict: str
    score: float
    reasoning: str
    model: str
    decided_at: datetime


class ClaimView(BaseModel):
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
    verdict: VerdictView | None = None

    @property
    def decided(self) -> bool:
        return self.status in TERMINAL_CLAIM


class TaskView(BaseModel):
    task_id: uuid.UUID
    question: str
    entity: str | None
    tier: str
    status: str
    origin: str
    error: str | None
    created_at: datetime
    claim: ClaimView | None = None

    @property
    def finished(self) -> bool:
        """A decided claim, or a task that failed (dead-lettered, no provider answered…)."""
        return self.status == "failed" or (self.claim is not None and self.claim.decided)


class FindingView(BaseModel):
    finding_id: uuid.UUID
    agent: str
    kind: str
    claim_ids: list[uuid.UUID]
    payload: dict[str, Any]
    created_at: datetime
    expires_at: datetime
    resolved_at: datetime | None


class AuditView(BaseModel):
    id: int
    occurred_at: datetime
    service: str
    action: str
    task_id: uuid.UUID | None
    claim_id: uuid.UUID | None
    subject_ids: dict[str, Any]
    payload: dict[str, Any]


class SearchResults(BaseModel):
    query: str
    mode: Literal["hybrid", "lexical", "dense"]
    hits: list[SourceHit]
