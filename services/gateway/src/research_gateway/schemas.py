"""HTTP request bodies of the gateway (the OpenAPI document is generated from these); the response
views it shares with the client are `research_contracts.views`."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field

from research_contracts import TaskFilters, Tier
from research_gateway.storable import SafeText, Slug


class FilterSubmission(TaskFilters):
    """`filters` of a submission: source names are slugs (`corpus`, `pubmed`)."""

    sources: list[Slug] = Field(
        default_factory=list,
        max_length=20,
        examples=[["corpus", "pubmed"]],
        description="Evidence sources to ask (empty = the configured default).",
    )


class TaskSubmission(BaseModel):
    """`POST /api/research/v1/tasks`. Text holding NUL, control characters or lone surrogates is a 422."""

    model_config = ConfigDict(extra="forbid")

    question: SafeText = Field(
        min_length=3,
        max_length=2000,
        examples=["Does vitamin D supplementation reduce fracture risk?"],
    )
    entity: SafeText | None = Field(default=None, max_length=200)
    tier: Tier = Tier.priority
    patient_ref: SafeText | None = Field(
        default=None,
        max_length=500,
        description="Patient context for the model, de-identified first; never stored.",
    )
    source_types: list[Slug] = Field(default_factory=list, max_length=20)
    filters: FilterSubmission = Field(default_factory=FilterSubmission)
    task_id: uuid.UUID | None = Field(
        default=None,
        description="The client's own id for the task: submitting it again returns the same task.",
    )
