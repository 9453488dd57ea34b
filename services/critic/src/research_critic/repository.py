"""What the critic reads from the ledger, and its verdicts applied through `research_ledger`.

`Verdicts.decide` is `Ledger.decide`: promote / supersede / reject in one transaction, one
decision per entity at a time (see `research_ledger.verdicts` for the ordering rules).
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import ClaimDecided, CriticVerdict
from research_ledger import EntityChanged, Ledger
from research_platform.models import MemoryClaim

SERVICE = "critic"

__all__ = ["SERVICE", "EntityChanged", "Verdicts"]


class Verdicts:
    """The critic's view of the ledger: the claim under review and its entity's active claims."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ledger = Ledger(session, service=SERVICE)

    async def claim(self, claim_id: uuid.UUID) -> MemoryClaim | None:
        return await self.session.get(MemoryClaim, claim_id)

    async def active_of_entity(self, entity: str, *, besides: uuid.UUID) -> list[MemoryClaim]:
        return await self.ledger.active_of_entity(entity, besides=besides)

    async def decide(self, claim_id: uuid.UUID, verdict: CriticVerdict, considered: set[uuid.UUID]) -> ClaimDecided | None:
        """Apply `verdict` (None on a redelivery; `EntityChanged` when the entity moved on meanwhile)."""
        return await self.ledger.decide(claim_id, verdict, considered)
