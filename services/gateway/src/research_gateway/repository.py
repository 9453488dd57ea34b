"""What the gateway reads: read models of tasks and claims (writes go through `research_ledger`)."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import Support
from research_contracts.views import ClaimView, TaskView, VerdictView
from research_ledger.tables import CriticVerdictRow, MemoryClaim, ResearchTask


class TaskDesk:
    """The ledger's read side for HTTP clients."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def task(self, task_id: uuid.UUID) -> TaskView | None:
        row = await self.session.get(ResearchTask, task_id)
        if row is None:
            return None
        claim = await self.session.scalar(select(MemoryClaim).where(MemoryClaim.task_id == task_id))
        return TaskView(
            task_id=row.id,
            question=row.question,
            entity=row.entity,
            tier=row.tier,
            status=row.status,
            origin=row.origin,
            error=row.error,
            created_at=row.created_at,
            claim=await self._claim_view(claim) if claim else None,
        )

    async def claim(self, claim_id: uuid.UUID) -> ClaimView | None:
        row = await self.session.get(MemoryClaim, claim_id)
        return await self._claim_view(row) if row else None

    async def _claim_view(self, claim: MemoryClaim) -> ClaimView:
        verdict = await self.session.scalar(
            select(CriticVerdictRow)
            .where(CriticVerdictRow.claim_id == claim.id)
            .order_by(CriticVerdictRow.created_at.desc(), CriticVerdictRow.id.desc())
            .limit(1)
        )
        return ClaimView(
            claim_id=claim.id,
            task_id=claim.task_id,
            entity=claim.entity,
            question=claim.question,
            statement=claim.statement,
            status=claim.status,
            confidence=claim.confidence,
            supports=[Support.model_validate(s) for s in claim.supports],
            supersedes=list(claim.supersedes or []),
            superseded_by=claim.superseded_by,
            model=claim.model,
            created_at=claim.created_at,
            decided_at=claim.decided_at,
            verdict=VerdictView(
                verdict=verdict.verdict,
                score=verdict.score,
                reasoning=verdict.reasoning,
                model=verdict.model,
                decided_at=verdict.created_at,
            )
            if verdict
            else None,
        )
