"""HTTP request and response bodies of the gateway (the OpenAPI document is generated from these)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from research_contracts import SourceHit, Support, TaskFilters, Tier


class TaskSubmission(BaseModel):
    """`POST /api/research/v1/tasks`."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=3, max_length=2000, examples=["Does vitamin D supplementation reduce fracture risk?"])
    entity: str | None = Field(default=None, max_length=200)
    tier: Tier = Tier.priority
    patient_ref: str | None = Field(default=None, max_length=500)
    source_types: list[str] = Field(default_factory=list)
    filters: TaskFilters = Field(default_factory=TaskFilters)
    task_id: uuid.UUID | None = Field(
        default=None, description="The client's own id for the task: submitting it again returns the same task."
    )


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


class SearchResults(BaseModel):
    query: str
    mode: Literal["hybrid", "lexical", "dense"]
    hits: list[SourceHit]
