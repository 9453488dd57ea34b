"""The ledger's active claims grouped by entity (`uow.entities`): which entities have enough of
them to compare, and one entity's cluster, as the correlator reads them. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.sources import Sources
from research_ledger.status import ClaimStatus
from research_ledger.tables import MemoryClaim


class Entities:
    """Reads of `memory_claims` by entity (and the years of the sources a cluster cites)."""

    def __init__(self, session: AsyncSession, *, sources: Sources) -> None:
        self.session = session
        self.sources = sources

    async def clustered(self, *, after: str, limit: int, min_claims: int) -> list[str]:
        """Entities with at least `min_claims` active claims, in name order after `after`, at most
        `limit` of them (0: all)."""
        query = (
            select(MemoryClaim.entity)
            .where(MemoryClaim.status == ClaimStatus.active, MemoryClaim.entity > after)
            .group_by(MemoryClaim.entity)
            .having(func.count() >= min_claims)
            .order_by(MemoryClaim.entity)
        )
        if limit:
            query = query.limit(limit)
        return list(await self.session.scalars(query))

    async def known(self, limit: int = 5000) -> list[str]:
        """Up to `limit` entity names that have an active claim (any order)."""
        rows = await self.session.scalars(
            select(MemoryClaim.entity)
            .where(MemoryClaim.status == ClaimStatus.active)
            .distinct()
            .limit(limit)
        )
        return list(rows)

    async def cluster(
        self, entity: str, max_claims: int
    ) -> tuple[list[Mapping[str, Any]], dict[str, int]]:
        """The newest `max_claims` active claims of `entity`, oldest first (id, statement,
        confidence, supports, created_at), and the publication year of every source they cite."""
        rows = (
            (
                await self.session.execute(
                    select(
                        MemoryClaim.id,
                        MemoryClaim.statement,
                        MemoryClaim.confidence,
                        MemoryClaim.supports,
                        MemoryClaim.created_at,
                    )
                    .where(MemoryClaim.entity == entity, MemoryClaim.status == ClaimStatus.active)
                    .order_by(MemoryClaim.created_at.desc())
                    .limit(max_claims)
                )
            )
            .mappings()
            .all()
        )
        cited = {
            str(s.get("source_id"))
            for row in rows
            for s in (row["supports"] or [])
            if isinstance(s, dict)
        }
        years = await self.sources.years(cited)
        # RowMapping's keys are column names (it also takes Column objects)
        return cast(list[Mapping[str, Any]], list(reversed(rows))), years
