"""Turn the ledger rows a critic message names into what the critic judges; fail fast otherwise.

FastStream has already parsed the message (`ClaimProposed`, `RecritiqueClaim`); what is left to
normalise is the ledger's side: the claim under review and the active claims of its entity
become `ClaimForReview`s in one `Review`. A claim the ledger does not know, or whose stored
supports do not parse, cannot be judged: `PrepareError`, so the message is dead-lettered with
the reason instead of being retried. A re-critique judges the claim without the sources that
no longer back it (`without`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from pydantic import ValidationError

from research_contracts import Support
from research_ledger.claims import MemoryClaim
from research_llm import ClaimForReview
from research_platform.errors import PrepareError


@dataclass(frozen=True)
class Review:
    """A claim to judge and the active claims of its entity it is judged against."""

    candidate: ClaimForReview
    active: list[ClaimForReview]
    question: str = ""  # the research question the candidate answers (the offline stance check)
    quote_vectors: Mapping[str, Sequence[float]] = field(
        default_factory=dict
    )  # stored vectors of its quotes

    @property
    def considered(self) -> set[uuid.UUID]:
        """The only claims a verdict on this review may supersede."""
        return {claim.claim_id for claim in self.active}


def known(claim_id: uuid.UUID, claim: MemoryClaim | None) -> MemoryClaim:
    """The claim a message names; `PrepareError` when the ledger has no such claim."""
    if claim is None:
        raise PrepareError(f"unknown claim {claim_id}")
    return claim


def review(
    claim: MemoryClaim,
    active: list[MemoryClaim],
    quote_vectors: Mapping[str, Sequence[float]] | None = None,
) -> Review:
    """`claim` and its entity's `active` claims as the provider chain reads them."""
    return Review(
        candidate=for_review(claim),
        active=[for_review(other) for other in active],
        question=claim.question or "",
        quote_vectors=quote_vectors or {},
    )


def quotes(claim: MemoryClaim) -> list[str]:
    """The non-blank quotes of `claim`'s supports."""
    return [
        str(s["quote"])
        for s in claim.supports
        if isinstance(s, dict) and str(s.get("quote") or "").strip()
    ]


def for_review(claim: MemoryClaim) -> ClaimForReview:
    try:
        supports = [Support.model_validate(support) for support in claim.supports]
    except ValidationError as exc:
        raise PrepareError(
            f"claim {claim.id} has malformed supports: {exc.error_count()} errors"
        ) from exc
    return ClaimForReview(
        claim_id=claim.id,
        entity=claim.entity,
        statement=claim.statement,
        confidence=claim.confidence,
        supports=supports,
        created_at=claim.created_at,
    )


def cited_sources(claim: MemoryClaim) -> list[str]:
    """The source ids `claim` cites, in its supports' order."""
    return [
        str(support.get("source_id")) for support in claim.supports if isinstance(support, dict)
    ]


def without(judged: Review, discredited: set[str]) -> Review:
    """The review with the candidate's supports from `discredited` sources removed."""
    kept = [
        support for support in judged.candidate.supports if support.source_id not in discredited
    ]
    return replace(judged, candidate=judged.candidate.model_copy(update={"supports": kept}))
