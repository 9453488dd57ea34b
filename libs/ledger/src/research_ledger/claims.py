"""The claim lifecycle (`Ledger.claims`): propose (pending) → promote | supersede | reject, and the researcher's sources.

Every move is one statement guarded by the state it leaves (`WHERE status = …`), so a
redelivered command changes nothing the second time; the audit row is staged in the same
transaction. Verdict-driven moves (the critic's) are `research_ledger.verdicts`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import SourceHit, Support
from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.deidentified import clean
from research_ledger.status import ClaimStatus
from research_ledger.tables import MemoryClaim, ResearchSource
from research_ledger.tasks import Tasks

# the rows `Claims` returns, as the services type them (they never query the tables themselves)
__all__ = ["ClaimProposal", "Claims", "MemoryClaim", "RelatedClaim"]

CITING = text(
    """
SELECT c.id, array_agg(DISTINCT s->>'source_id') AS cited
FROM memory_claims c CROSS JOIN LATERAL jsonb_array_elements(c.supports) s
WHERE c.status = 'active' AND s->>'source_id' = ANY(CAST(:ids AS text[]))
GROUP BY c.id
"""
)

# Active claims old enough to re-check, not re-checked lately (an audit row of the agent) and
# without an open finding of the agent: the replicator's walk.
DUE_FOR_RECHECK = text(
    """
SELECT c.id, c.question, c.entity, c.statement, c.supports
FROM memory_claims c
WHERE c.status = 'active'
  AND c.created_at < now() - make_interval(secs => :min_age_s)
  AND NOT EXISTS (
      SELECT 1 FROM audit_events a
      WHERE a.claim_id = c.id AND a.service = :agent
        AND a.occurred_at > now() - make_interval(secs => :recheck_s))
  AND NOT EXISTS (
      SELECT 1 FROM findings f
      WHERE f.claim_ids @> ARRAY[c.id] AND f.agent = :agent
        AND f.resolved_at IS NULL AND f.expires_at > now())
ORDER BY c.created_at
LIMIT :limit
"""
)


@dataclass(frozen=True, slots=True)
class RelatedClaim:
    """An active claim close to a question (`Claims.nearest`), and the sources it cites."""

    claim_id: uuid.UUID
    entity: str
    statement: str
    confidence: float
    similarity: float
    source_ids: list[str]


@dataclass
class ClaimProposal:
    """A pending claim ready to persist, with what its audit rows should say."""

    claim_id: uuid.UUID
    task_id: uuid.UUID | None  # None: a review's claim, which answers no research task
    entity: str
    question: str
    statement: str
    confidence: float
    supports: list[Support]
    dropped_supports: int
    model: str
    decay_at: datetime
    failures: list[dict[str, Any]] = field(
        default_factory=list
    )  # one `research.llm.provider_failed` each
    provenance: dict[str, Any] = field(
        default_factory=dict
    )  # merged into `research.claim.proposed`
    notes: list[tuple[AuditAction, dict[str, Any]]] = field(
        default_factory=list
    )  # extra audit rows


class Claims(LedgerBase):
    """Intent methods on `memory_claims` (and the sources a claim cites): `Ledger.claims`. A
    proposal also moves its task to `claimed`, through `tasks`, in the same transaction."""

    def __init__(self, session: AsyncSession, *, service: str, tasks: Tasks) -> None:
        super().__init__(session, service=service)
        self.tasks = tasks

    async def for_task(self, task_id: uuid.UUID) -> MemoryClaim | None:
        return await self.session.scalar(select(MemoryClaim).where(MemoryClaim.task_id == task_id))

    async def propose(
        self, claim: ClaimProposal, embedding: list[float] | None, hits: list[SourceHit]
    ) -> bool:
        """Persist the pending claim, the sources it cites, the task's `claimed` status and the
        audit rows; False (nothing written) when the task already has its claim."""
        stmt = (
            insert(MemoryClaim)
            .values(
                id=claim.claim_id,
                task_id=claim.task_id,
                entity=claim.entity,
                question=clean(
                    claim.question, what="a claim's question"
                ),  # refused unless de-identified
                statement=claim.statement,
                status=ClaimStatus.pending.value,
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
        if (await self.session.execute(stmt)).scalar_one_or_none() is None:
            return False
        await self._remember_sources(hits, {s.source_id for s in claim.supports})
        if claim.task_id is not None:
            await self.tasks.mark_claimed(claim.task_id)
        ids: dict[str, Any] = {"task_id": claim.task_id, "claim_id": claim.claim_id}
        for action, payload in claim.notes:
            self.audit(action, **ids, payload=payload)
        self.audit(
            AuditAction.CLAIM_PROPOSED,
            **ids,
            payload={
                "entity": claim.entity,
                "model": claim.model,
                "supports": len(claim.supports),
                "dropped_supports": claim.dropped_supports,
                **claim.provenance,
            },
        )
        for failure in claim.failures:
            self.audit(AuditAction.LLM_PROVIDER_FAILED, **ids, payload=failure)
        return True

    async def citing(self, source_ids: list[str]) -> dict[uuid.UUID, list[str]]:
        """Active claims whose supports cite any of `source_ids` → the ones each cites (one scan of
        the active claims' supports)."""
        if not source_ids:
            return {}
        rows = await self.session.execute(
            CITING,
            {"ids": list(source_ids)},
        )
        return {r.id: list(r.cited) for r in rows}

    async def retract_sources(self, source_ids: list[str]) -> list[str]:
        """Mark the ledger's sources retracted (`research_sources.retracted`); returns the ids that
        were not retracted before (unknown ids are left alone: no claim cites them)."""
        if not source_ids:
            return []
        rows = await self.session.scalars(
            update(ResearchSource)
            .where(
                ResearchSource.source_id.in_(list(source_ids)),
                ResearchSource.retracted.is_not(True),
            )
            .values(retracted=True)
            .returning(ResearchSource.source_id)
        )
        return sorted(rows)

    async def _remember_sources(self, hits: list[SourceHit], cited: set[str]) -> None:
        """Insert or refresh the sources a claim cites. A source once retracted stays retracted: a
        later hit without the flag (a search index that has not caught up, a connector that never
        reports it) must not undo a retraction notice."""
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
                    "retracted": func.coalesce(ResearchSource.retracted, False)
                    | stmt.excluded.retracted,
                    "metadata": stmt.excluded["metadata"],
                    "last_seen_at": stmt.excluded.last_seen_at,
                },
            )
        )

    # The reads the services need (named queries; nothing below writes).

    async def get(self, claim_id: uuid.UUID, *, settled: bool = False) -> MemoryClaim | None:
        """The claim; `settled` locks its row (primary only) and reads it afresh, waiting for a
        writer in flight to commit (the critic's re-check after a drain)."""
        return await self.session.get(
            MemoryClaim, claim_id, with_for_update=settled, populate_existing=settled
        )

    async def statuses(self, claim_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
        """The status of each of `claim_ids` the ledger knows (an absent id is unknown to it)."""
        if not claim_ids:
            return {}
        rows = await self.session.execute(
            select(MemoryClaim.id, MemoryClaim.status).where(MemoryClaim.id.in_(claim_ids))
        )
        return {row.id: row.status for row in rows}

    async def pending_among(self, claim_ids: list[uuid.UUID]) -> list[MemoryClaim]:
        """The claims of `claim_ids` still `pending` (waiting for the critic)."""
        if not claim_ids:
            return []
        rows = await self.session.scalars(
            select(MemoryClaim).where(
                MemoryClaim.id.in_(claim_ids), MemoryClaim.status == ClaimStatus.pending
            )
        )
        return list(rows)

    async def nearest(
        self,
        embedding: list[float],
        *,
        entity: str | None,
        limit: int = 5,
        min_similarity: float = 0.45,
    ) -> list[RelatedClaim]:
        """The `limit` active claims nearest to `embedding` by cosine similarity (pgvector, HNSW),
        of `entity` when given, keeping those at `min_similarity` or above, nearest first."""
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
        return [
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

    async def due_for_recheck(
        self, *, min_age_days: float, recheck_days: float, limit: int
    ) -> list[Mapping[str, Any]]:
        """Rows (id, question, entity, statement, supports) of the active claims older than
        `min_age_days` that this service has not audited for `recheck_days` and holds no open
        finding on, oldest first: the replicator's next re-runs."""
        rows = await self.session.execute(
            DUE_FOR_RECHECK,
            {
                "min_age_s": min_age_days * 86400,
                "recheck_s": recheck_days * 86400,
                "limit": limit,
                "agent": self.service,
            },
        )
        # RowMapping's keys are column names (it also takes Column objects)
        return cast(list[Mapping[str, Any]], list(rows.mappings()))
