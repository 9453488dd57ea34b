"""What the researcher reads from the ledger: its memory of a question.

`LedgerMemory` recalls the nearest active claims by cosine similarity of their embeddings
(pgvector, HNSW) and the sources they cite. Every write (task started / failed, the pending
claim and its sources) goes through `research_ledger.Ledger`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import SourceHit
from research_ledger import ClaimStatus
from research_ledger.tables import MemoryClaim, ResearchSource

SERVICE = "researcher"


@dataclass(frozen=True, slots=True)
class RelatedClaim:
    """An active claim close to the question, and the sources it cites."""

    claim_id: uuid.UUID
    entity: str
    statement: str
    confidence: float
    similarity: float
    source_ids: list[str]


@dataclass(slots=True)
class Recollection:
    """What the ledger already knows about a question."""

    claims: list[RelatedClaim] = field(default_factory=list)
    sources: list[SourceHit] = field(
        default_factory=list
    )  # known, not retracted, in order of preference


class LedgerMemory:
    """Recall related active claims and the sources they already cite."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def recall(
        self,
        embedding: list[float],
        *,
        entity: str | None,
        limit: int = 5,
        min_similarity: float = 0.45,
        max_sources: int = 5,
    ) -> Recollection:
        """The `limit` active claims nearest to `embedding` (of `entity` when given) above
        `min_similarity`, and up to `max_sources` non-retracted sources they cite."""
        distance = MemoryClaim.embedding.cosine_distance(embedding)
        stmt = (
            select(
                MemoryClaim.id,
                MemoryClaim.entity,
                MemoryClaim.statement,
                MemoryClaim.confidence,
                MemoryClaim.supports,
                distance.label("distance"),
            )
            .where(MemoryClaim.status == ClaimStatus.active, MemoryClaim.embedding.is_not(None))
            .order_by(distance)
            .limit(limit)
        )
        if entity:
            stmt = stmt.where(MemoryClaim.entity == entity)
        claims = [
            RelatedClaim(
                claim_id=row.id,
                entity=row.entity,
                statement=row.statement,
                confidence=row.confidence,
                similarity=round(1.0 - float(row.distance), 4),
                source_ids=[
                    str(s.get("source_id")) for s in row.supports or [] if s.get("source_id")
                ],
            )
            for row in (await self.session.execute(stmt)).all()
            if 1.0 - float(row.distance) >= min_similarity
        ]
        wanted = list(dict.fromkeys(sid for claim in claims for sid in claim.source_ids))
        if not wanted:
            return Recollection(claims=claims)
        rows = {
            row.source_id: row
            for row in await self.session.scalars(
                select(ResearchSource).where(
                    ResearchSource.source_id.in_(wanted), ResearchSource.retracted.is_(False)
                )
            )
        }
        sources = [_as_hit(rows[sid]) for sid in wanted if sid in rows][:max_sources]
        return Recollection(claims=claims, sources=sources)


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
