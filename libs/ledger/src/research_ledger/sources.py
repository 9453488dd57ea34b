"""What the ledger knows of the sources claims cite (`uow.sources`, `research_sources`), as the
services read it. A source is written when a claim citing it is proposed (`claims.propose`) and
marked retracted by `claims.retract_sources`; nothing here writes.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import SourceHit
from research_ledger.tables import ResearchSource


class Sources:
    """Reads of `research_sources` in the unit of work's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def retracted(self, source_ids: set[str] | list[str]) -> set[str]:
        """Which of `source_ids` the ledger knows to be retracted (set by the connectors' metadata,
        the replicator or the scout); unknown ids are not."""
        ids = sorted(s for s in set(source_ids) if s)
        if not ids:
            return set()
        rows = await self.session.scalars(
            select(ResearchSource.source_id).where(
                ResearchSource.source_id.in_(ids), ResearchSource.retracted.is_(True)
            )
        )
        return set(rows)

    async def years(self, source_ids: set[str]) -> dict[str, int]:
        """The publication year of each known source of `source_ids` that has one."""
        if not source_ids:
            return {}
        rows = await self.session.execute(
            select(ResearchSource.source_id, ResearchSource.year).where(
                ResearchSource.source_id.in_(sorted(source_ids))
            )
        )
        return {source_id: year for source_id, year in rows.all() if year is not None}

    async def known(self, source_ids: list[str], *, limit: int) -> list[SourceHit]:
        """The non-retracted sources of `source_ids` the ledger holds, in the order asked, at most
        `limit`, as search hits marked `known` in their metadata (the researcher's memory)."""
        if not source_ids:
            return []
        rows = {
            row.source_id: row
            for row in await self.session.scalars(
                select(ResearchSource).where(
                    ResearchSource.source_id.in_(source_ids), ResearchSource.retracted.is_(False)
                )
            )
        }
        return [_as_hit(rows[sid]) for sid in source_ids if sid in rows][:limit]


def _as_hit(row: ResearchSource) -> SourceHit:
    return SourceHit(
        source_id=row.source_id,
        source=row.source,
        title=row.title,
        authors=[str(a) for a in row.authors or []],
        venue=row.venue,
        year=row.year,
        url=row.url,
        doi=row.doi,
        abstract=row.abstract,
        metadata={**(row.metadata_ or {}), "known": True},
    )
