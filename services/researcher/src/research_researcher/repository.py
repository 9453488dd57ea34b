"""Persistence of the researcher: tasks, pending claims, the sources they cite, and memory.

`ClaimLedger` writes (every state change with its audit row, in the caller's transaction);
`LedgerMemory` reads what the ledger already knows about a question: the nearest active
claims by cosine similarity of their embeddings (pgvector, HNSW) and the sources they cite.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import RunResearch, SourceHit
from research_ledger import AuditAction, audit
from research_platform.models import MemoryClaim, ResearchSource, ResearchTask
from research_researcher.reshape import ProposedClaim

SERVICE = "researcher"


class ClaimLedger:
    """The researcher's view of the ledger: it starts tasks and proposes claims."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def claim_for_task(self, task_id: uuid.UUID) -> MemoryClaim | None:
        return await self.session.scalar(select(MemoryClaim).where(MemoryClaim.task_id == task_id))

    async def start(self, task: RunResearch, *, waited_s: float = 0.0) -> None:
        """Record that work on `task` began (creating the task row when it came straight from the bus)."""
        stmt = insert(ResearchTask).values(
            id=task.task_id,
            question=task.question,
            entity=task.entity,
            tier=task.tier.value,
            status="researching",
            origin=task.origin,
            request=task.model_dump(mode="json", exclude={"patient_ref"}),  # patient context is never stored
        )
        await self.session.execute(
            stmt.on_conflict_do_update(
                index_elements=[ResearchTask.id],
                set_={"status": "researching", "entity": task.entity, "updated_at": stmt.excluded.updated_at},
            )
        )
        audit.record(
            self.session,
            AuditAction.TASK_STARTED,
            service=SERVICE,
            task_id=task.task_id,
            payload={"tier": task.tier.value, "waited_s": round(waited_s, 3)},
        )

    async def propose(self, claim: ProposedClaim, embedding: list[float] | None, hits: list[SourceHit]) -> bool:
        """Persist the pending claim, its sources and audit rows; False when the task already has a claim."""
        stmt = (
            insert(MemoryClaim)
            .values(
                id=claim.claim_id,
                task_id=claim.task_id,
                entity=claim.entity,
                question=claim.question,
                statement=claim.statement,
                status="pending",
                confidence=claim.confidence,
                supports=[s.model_dump(mode="json") for s in claim.supports],
                supersedes=[],
                decay_at=claim.decay_at,
                embedding=embedding,
                model=claim.model,
                dropped_supports=claim.dropped_supports,
                critic_timeouts=0,
            )
            .on_conflict_do_nothing()
            .returning(MemoryClaim.id)
        )
        created = (await self.session.execute(stmt)).scalar_one_or_none() is not None
        if not created:
            return False
        await self._remember_sources(hits, {s.source_id for s in claim.supports})
        await self.session.execute(
            update(ResearchTask).where(ResearchTask.id == claim.task_id).values(status="claimed")
        )
        for action, payload in claim.notes:
            audit.record(
                self.session,
                action,
                service=SERVICE,
                task_id=claim.task_id,
                claim_id=claim.claim_id,
                payload=payload,
            )
        audit.record(
            self.session,
            AuditAction.CLAIM_PROPOSED,
            service=SERVICE,
            task_id=claim.task_id,
            claim_id=claim.claim_id,
            payload={
                "entity": claim.entity,
                "model": claim.model,
                "supports": len(claim.supports),
                "dropped_supports": claim.dropped_supports,
                **claim.provenance,
            },
        )
        for failure in claim.failures:
            audit.record(
                self.session,
                AuditAction.LLM_PROVIDER_FAILED,
                service=SERVICE,
                task_id=claim.task_id,
                claim_id=claim.claim_id,
                payload=failure,
            )
        return True

    async def _remember_sources(self, hits: list[SourceHit], cited: set[str]) -> None:
        rows: list[dict[str, Any]] = [
            {
                "source_id": hit.source_id,
                "source": hit.source,
                "title": hit.title,
                "authors": hit.authors,
                "venue": hit.venue,
                "year": hit.year,
                "url": hit.url,
                "doi": hit.doi,
                "abstract": hit.abstract,
                "metadata": hit.model_dump(mode="json")["metadata"],
                "retracted": bool(hit.metadata.get("retracted", False)),
            }
            for hit in {h.source_id: h for h in hits if h.source_id in cited}.values()
        ]
        if not rows:
            return
        stmt = insert(ResearchSource).values(rows)
        await self.session.execute(
            stmt.on_conflict_do_update(
                index_elements=[ResearchSource.source_id],
                set_={
                    "title": stmt.excluded.title,
                    "retracted": stmt.excluded.retracted,
                    "metadata": stmt.excluded["metadata"],
                    "last_seen_at": stmt.excluded.last_seen_at,
                },
            )
        )

    async def fail(self, task_id: uuid.UUID, reason: str) -> None:
        await self.session.execute(
            update(ResearchTask).where(ResearchTask.id == task_id).values(status="failed", error=reason[:2000])
        )
        reason = reason[:2000]
        audit.record(
            self.session, AuditAction.TASK_FAILED, service=SERVICE, task_id=task_id, payload={"reason": reason}
        )


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
    sources: list[SourceHit] = field(default_factory=list)  # known, not retracted, in order of preference


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
            .where(MemoryClaim.status == "active", MemoryClaim.embedding.is_not(None))
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
                source_ids=[str(s.get("source_id")) for s in row.supports or [] if s.get("source_id")],
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
                select(ResearchSource).where(ResearchSource.source_id.in_(wanted), ResearchSource.retracted.is_(False))
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
