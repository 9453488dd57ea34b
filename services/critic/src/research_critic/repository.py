"""What the critic reads from the ledger, and its verdicts applied through `research_ledger`.

`Verdicts.decide` is `Ledger.decide`: promote / supersede / reject in one transaction, one
decision per entity at a time (see `research_ledger.verdicts` for the ordering rules).
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import ClaimDecided, CriticVerdict
from research_corpus.sentence_vectors import SentenceVectors
from research_ledger import EntityChanged, Ledger
from research_platform.logging import get_logger
from research_platform.models import MemoryClaim

log = get_logger(__name__)

SERVICE = "critic"

__all__ = ["SERVICE", "EntityChanged", "Verdicts"]


class Verdicts:
    """The critic's view of the ledger: the claim under review and its entity's active claims."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ledger = Ledger(session, service=SERVICE)

    async def claim(self, claim_id: uuid.UUID) -> MemoryClaim | None:
        return await self.session.get(MemoryClaim, claim_id)

    async def quote_vectors(self, quotes: list[str]) -> dict[str, list[float]]:
        """The stored corpus vectors of `quotes` (one query), so the stance check embeds only the
        question; {} when the lookup fails — an optimisation, never a reason to fail the judgement.

        The critic reads in autocommit sessions, where a failed statement aborts nothing else (and
        a SAVEPOINT would itself fail); both flows read these vectors last."""
        if not quotes:
            return {}
        try:
            return await SentenceVectors(self.session).vectors_of(quotes)
        except Exception as exc:  # noqa: BLE001 - the classifier embeds the quotes itself instead
            log.warning("quote vectors unavailable, the stance check embeds the quotes", error=repr(exc)[:300])
            return {}

    async def active_of_entity(self, entity: str, *, besides: uuid.UUID) -> list[MemoryClaim]:
        return await self.ledger.active_of_entity(entity, besides=besides)

    async def decide(self, claim_id: uuid.UUID, verdict: CriticVerdict, considered: set[uuid.UUID]) -> ClaimDecided | None:
        """Apply `verdict` (None on a redelivery; `EntityChanged` when the entity moved on meanwhile)."""
        return await self.ledger.decide(claim_id, verdict, considered)
