"""Tasks and claims as a reader sees them (`uow.claim_views`): each claim with its latest verdict,
a task with its claim. The read side of `tasks`, `claims` and `verdicts`; nothing here writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import distinct_on

from research_contracts.views import ClaimView, TaskView, VerdictView
from research_ledger.base import LedgerBase
from research_ledger.tables import CriticVerdictRow, MemoryClaim, ResearchTask, view_of


def _view(claim: MemoryClaim, verdict: CriticVerdictRow | None) -> ClaimView:
    """`claim` as a reader sees it, with its latest verdict."""
    return view_of(
        ClaimView,
        claim,
        claim_id=claim.id,
        supersedes=claim.supersedes or [],
        verdict=view_of(VerdictView, verdict, decided_at=verdict.created_at) if verdict else None,
    )


class ClaimViews(LedgerBase):
    """Read models of tasks and claims, in the unit of work's session."""

    async def task(self, task_id: uuid.UUID) -> TaskView | None:
        """The task `task_id` with its claim (and the claim's latest verdict), or None."""
        row = await self.session.get(ResearchTask, task_id)
        if row is None:
            return None
        claim = await self.session.scalar(select(MemoryClaim).where(MemoryClaim.task_id == task_id))
        return view_of(
            TaskView, row, task_id=row.id, claim=await self._with_verdict(claim) if claim else None
        )

    async def claim(self, claim_id: uuid.UUID) -> ClaimView | None:
        """The claim `claim_id` with its latest verdict, or None."""
        row = await self.session.get(MemoryClaim, claim_id)
        return await self._with_verdict(row) if row else None

    async def listing(
        self, *, status: str | None = None, entity: str | None = None, limit: int = 50
    ) -> list[ClaimView]:
        """Claims newest first, narrowed by `status` and `entity`, each with its latest verdict
        (one query for the claims, one for their verdicts)."""
        query = select(MemoryClaim)
        if status is not None:
            query = query.where(MemoryClaim.status == status)
        if entity:
            query = query.where(MemoryClaim.entity == entity)
        claims = list(
            await self.session.scalars(
                query.order_by(MemoryClaim.created_at.desc(), MemoryClaim.id).limit(limit)
            )
        )
        if not claims:
            return []
        latest = (
            select(CriticVerdictRow)
            .where(CriticVerdictRow.claim_id.in_([c.id for c in claims]))
            .ext(distinct_on(CriticVerdictRow.claim_id))
            .order_by(
                CriticVerdictRow.claim_id,
                CriticVerdictRow.created_at.desc(),
                CriticVerdictRow.id.desc(),
            )
        )
        verdicts = {v.claim_id: v for v in await self.session.scalars(latest)}
        return [_view(c, verdicts.get(c.id)) for c in claims]

    async def statuses(self, claim_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
        """The status of each of `claim_ids` the ledger holds."""
        if not claim_ids:
            return {}
        rows = await self.session.execute(
            select(MemoryClaim.id, MemoryClaim.status).where(MemoryClaim.id.in_(list(claim_ids)))
        )
        return {claim_id: status for claim_id, status in rows.all()}

    async def _with_verdict(self, claim: MemoryClaim) -> ClaimView:
        verdict = await self.session.scalar(
            select(CriticVerdictRow)
            .where(CriticVerdictRow.claim_id == claim.id)
            .order_by(CriticVerdictRow.created_at.desc(), CriticVerdictRow.id.desc())
            .limit(1)
        )
        return _view(claim, verdict)
