"""The shapes that cross the LLM boundary: evidence in, claim drafts and verdicts out.

`ClaimDraft` and `VerdictDraft` are also the JSON schemas a remote model must answer with
(`response_format` / `response_schema`); anything that does not validate is an
`InvalidResponse`. Every array and string of a schema a model answers is bounded (`maxItems`,
`maxLength`): a server that compiles the schema into a grammar (llama.cpp, vLLM) then stops a
small model that would otherwise repeat list items until `max_tokens` and return JSON cut short
(tests/llm/test_schemas.py walks every schema the engines send). The schema's bounds are tighter
than the model's (`json_schema_extra`): a grammar-bound model cannot exceed them, and a quote it
had to stop short is still a verbatim prefix of its sentence, while a model that does not enforce
schemas is held only to the looser pydantic limits when its answer is read.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from research_contracts import CriticVerdict, Support, Verdict

Shape = TypeVar("Shape", bound=BaseModel)
MAX_SUPPORTS = 8


class EvidenceDoc(BaseModel):
    """One evidence document offered to the model; `text` is what quotes must come from."""

    source_id: str = Field(description="Source-prefixed id, e.g. `corpus:4983`, `pmid:123`.")
    title: str = ""
    text: str = Field(description="Abstract or snippet text as the source gave it.")
    year: int | None = None
    score: float | None = Field(default=None, description="Retrieval score; higher is better.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    sentence_vectors: dict[str, list[float]] = Field(
        default_factory=dict,
        exclude=True,
        repr=False,
        description="Vectors already known for sentences of `text` (the corpus stores them at ingest), by sentence "
        "text; the offline engine embeds only the sentences missing here. Never sent to a remote model.",
    )


class SupportDraft(BaseModel):
    """A citation proposed by the model: the quote must be an exact substring of the source text."""

    model_config = ConfigDict(extra="forbid")

    source_id: str = Field(max_length=120, description="Id of one of the evidence documents.")
    quote: str = Field(
        min_length=1,
        max_length=2000,
        json_schema_extra={"maxLength": 300},
        description="Exact substring of that document's text.",
    )
    locator: str | None = Field(
        default=None,
        max_length=60,
        json_schema_extra={"maxLength": 40},
        description="Where the quote sits, e.g. `sentence 3`.",
    )


class ClaimDraft(BaseModel):
    """A one-sentence claim with its citations (the researcher's JSON schema)."""

    model_config = ConfigDict(extra="forbid")

    statement: str = Field(
        min_length=1,
        max_length=2000,
        json_schema_extra={"maxLength": 300},
        description="The claim, in one sentence.",
    )
    entity: str = Field(
        min_length=1,
        max_length=200,
        json_schema_extra={"maxLength": 100},
        description="What the claim is about.",
    )
    confidence: float = Field(ge=0.0, le=1.0, description="How well the evidence supports it.")
    supports: list[SupportDraft] = Field(
        default_factory=list, max_length=MAX_SUPPORTS, json_schema_extra={"maxItems": 3}
    )


class VerdictDraft(BaseModel):
    """The critic's JSON schema for a remote model: a verdict, a score and the reasoning."""

    model_config = ConfigDict(extra="forbid")

    verdict: Verdict
    score: float = Field(ge=0.0, le=1.0)
    reasoning: str = Field(min_length=1, max_length=4000, json_schema_extra={"maxLength": 400})
    supersedes: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list,
        max_length=20,
        json_schema_extra={"maxItems": 4},
        description="claim_id values of active claims this one replaces.",
    )


class ClaimForReview(BaseModel):
    """A claim as the critic sees it: the pending candidate or one of the active claims."""

    claim_id: uuid.UUID
    entity: str
    statement: str
    confidence: float = Field(ge=0.0, le=1.0)
    supports: list[Support] = Field(default_factory=list)
    created_at: datetime | None = None


class ProviderFailure(BaseModel):
    """Why one provider did not answer; the services write one audit row per failure."""

    provider: str
    model: str
    reason: str
    status: int | None = None


class Provenance(BaseModel):
    """Who produced a chain's answer and who failed first: every outcome of a `ProviderChain`."""

    provider: str
    model: str
    failures: list[ProviderFailure] = Field(default_factory=list)
    usage: dict[str, Any] = Field(
        default_factory=dict,
        description="Tokens in / out, cost and seconds of this question (research_llm.usage).",
    )


class DraftOutcome(Provenance):
    """The researcher's answer: the draft plus who produced it and who failed first."""

    draft: ClaimDraft


class JudgeOutcome(Provenance):
    """The critic's answer: the verdict plus who produced it and who failed first."""

    verdict: CriticVerdict


class Answered(Provenance, Generic[Shape]):
    """A free-form question's answer (`ProviderChain.ask`) plus who produced it and who failed first."""

    answer: Shape
