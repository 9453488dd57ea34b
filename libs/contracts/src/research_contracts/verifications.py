"""Claim-verification contracts (seed 000's second mode): the `RequestVerification` command and
the `VerificationChanged` event of a watched claim.

`RequestVerification` is what `POST /api/research/v1/verifications` publishes on
`research.verify.requested` (JetStream `RESEARCH_VERIFICATIONS`, consumed by the verifier);
publishing it directly is a supported interface, and the replicator publishes one (`origin`
"watch") when a watched claim is due. Validation lives on the model so that the gateway's 422
and the bus's dead letter give the same reasons (empty or oversized claim, unknown source).
"""

from __future__ import annotations

import re
import uuid
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from research_contracts.reviews import (
    EVIDENCE_SOURCES,
    ReviewFilters,
    deidentified_within,
    worded_pattern,
)
from research_contracts.runs import RUN_ID_PATTERN

CLAIM_MAX_CHARS: Final = (
    2000  # = research_verification.MAX_CLAIM_CHARS (contracts cannot import it)
)
# A claim states a finding in words: a letter somewhere and at least three non-blank characters
# ("000" or "? !" are not claims). The schema publishes the same rule the validator applies.
CLAIM_WORD: Final = r"[^\W\d_]"  # a letter
CLAIM_PATTERN: Final = worded_pattern(CLAIM_WORD)


def verification_run_id(verification_id: uuid.UUID, suffix: str = "1") -> str:
    """The run id of a verification's run (`1` = the first; re-verifications use a fresh suffix)."""
    return f"vf-{verification_id.hex[:16]}-{suffix}"


class RequestVerification(BaseModel):
    """Command: verify `claim` against the literature (six verdicts × three confidences)."""

    model_config = ConfigDict(extra="forbid")

    verification_id: uuid.UUID = Field(
        default_factory=uuid.uuid4, description="Id of the verification (and its report)."
    )
    run_id: str | None = Field(
        default=None,
        pattern=RUN_ID_PATTERN,
        description="Run whose events trace the work; derived from the id when empty.",
    )
    claim: str = Field(
        min_length=3,
        max_length=CLAIM_MAX_CHARS,
        description="The claim to verify.",
        json_schema_extra={"pattern": CLAIM_PATTERN},
        examples=["Aspirin reduces the risk of stroke"],
    )
    watch: bool = Field(
        default=False, description="Keep re-verifying the claim on the watch schedule."
    )
    sources: list[str] = Field(
        default_factory=lambda: ["corpus"],
        max_length=len(EVIDENCE_SOURCES),
        description="Evidence sources: the corpus always, plus the outside connectors named here.",
    )
    filters: ReviewFilters = Field(default_factory=ReviewFilters)
    origin: str = Field(
        default="api",
        max_length=100,
        description="api | bus | watch (a scheduled re-verification).",
    )

    @field_validator("claim")
    @classmethod
    def _claim_has_words(cls, value: str) -> str:
        if not re.search(CLAIM_PATTERN, value):
            raise ValueError("claim must state a finding in words (at least 3 characters)")
        # the privacy boundary: only de-identified text goes on
        return deidentified_within(" ".join(value.split()), CLAIM_MAX_CHARS, "the claim")

    @field_validator("sources")
    @classmethod
    def _known_sources(cls, value: list[str]) -> list[str]:
        names = [s.strip().lower() for s in value]
        unknown = [str(at) for at, s in enumerate(names) if s not in EVIDENCE_SOURCES]
        if unknown:  # by position, not by value: a 422 never echoes what was sent
            raise ValueError(
                f"unknown source at position {', '.join(unknown)}; known: {', '.join(EVIDENCE_SOURCES)}"
            )
        return list(dict.fromkeys(["corpus", *names]))

    def effective_run_id(self) -> str:
        return self.run_id or verification_run_id(self.verification_id)


class VerificationChanged(BaseModel):
    """Event: a re-verified watched claim changed verdict or confidence, or lost a source."""

    verification_id: uuid.UUID
    claim: str
    run_id: str
    previous_verdict: str
    previous_confidence: str
    verdict: str
    confidence: str
    retracted_sources: list[str] = Field(default_factory=list)
    cause: str = Field(
        default="evidence",
        description="`judge` when a new judge (model or rule set) gave the new verdict, `evidence` "
        "when the same judge read changed evidence.",
    )
    previous_judge: str = ""
    judge: str = ""
