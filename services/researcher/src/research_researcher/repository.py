"""What the researcher remembers of a question: the nearest active claims and the sources they
cite, read through the ledger's named queries (`uow.claims.nearest`, `uow.sources.known`).

Every write (task started / failed, the pending claim and its sources, its announcement in the
outbox) goes through the ledger's unit of work in `pipeline.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from research_contracts import SourceHit
from research_ledger import UnitOfWork
from research_ledger.claims import RelatedClaim

SERVICE = "researcher"

__all__ = ["SERVICE", "Recollection", "RelatedClaim", "recall"]


@dataclass(slots=True)
class Recollection:
    """What the ledger already knows about a question."""

    claims: list[RelatedClaim] = field(default_factory=list)
    sources: list[SourceHit] = field(
        default_factory=list
    )  # known, not retracted, in order of preference


async def recall(
    uow: UnitOfWork,
    embedding: list[float],
    *,
    entity: str | None,
    limit: int = 5,
    min_similarity: float = 0.45,
    max_sources: int = 5,
) -> Recollection:
    """The `limit` active claims nearest to `embedding` (of `entity` when given) above
    `min_similarity`, and up to `max_sources` non-retracted sources they cite."""
    claims = await uow.claims.nearest(
        embedding, entity=entity, limit=limit, min_similarity=min_similarity
    )
    wanted = list(dict.fromkeys(sid for claim in claims for sid in claim.source_ids))
    return Recollection(claims=claims, sources=await uow.sources.known(wanted, limit=max_sources))
