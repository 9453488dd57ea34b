"""Persistence of the critic: reading claims for review and applying verdicts atomically."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import ClaimDecided, ClaimStatus, CriticVerdict, Support, Verdict
from research_llm import ClaimForReview
from research_ledger import AuditAction, audit
from research_platform.errors import TransientError
from research_platform.models import CriticVerdictRow, MemoryClaim

SERVICE = "critic"


class EntityChanged(TransientError):
    """The entity's active claims changed between judging a claim and applying the verdict."""


def for_review(claim: MemoryClaim) -> ClaimForReview:
    return ClaimForReview(
        claim_id=claim.id,
        entity=claim.entity,
        statement=claim.statement,
        confidence=claim.confidence,
        supports=[Support.model_validate(s) for s in claim.supports],
        created_at=claim.created_at,
    )


class Verdicts:
    """The critic's view of the ledger."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def claim(self, claim_id: uuid.UUID) -> MemoryClaim | None:
        return await self.session.get(MemoryClaim, claim_id)

    async def active_of_entity(self, entity: str, *, besides: uuid.UUID) -> list[MemoryClaim]:
        rows = await self.session.scalars(
            select(MemoryClaim)
            .where(MemoryClaim.entity == entity, MemoryClaim.status == ClaimStatus.active, MemoryClaim.id != besides)
            .order_by(MemoryClaim.created_at)
        )
        return list(rows)

    async def decide(
        self, claim_id: uuid.UUID, verdict: CriticVerdict, considered: set[uuid.UUID]
    ) -> ClaimDecided | None:
        """Apply `verdict` to a pending claim in the caller's transaction.

        Returns None when the claim is no longer pending (a redelivery). Raises `EntityChanged`
        when the entity's active claims changed since the verdict was reached, so it is judged again.
        """
        claim = await self.session.get(MemoryClaim, claim_id, with_for_update=True)
        if claim is None or claim.status != ClaimStatus.pending:
            return None
        # One decision per entity at a time: two pending claims must not both become active unseen.
        await self.session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:entity))"), {"entity": claim.entity})
        active_now = {c.id for c in await self.active_of_entity(claim.entity, besides=claim.id)}
        if verdict.verdict is not Verdict.reject and active_now - considered:
            raise EntityChanged("the entity's active claims changed while the claim was judged")
        now = datetime.now(UTC)
        self.session.add(
            CriticVerdictRow(
                claim_id=claim.id,
                verdict=verdict.verdict.value,
                score=verdict.score,
                reasoning=verdict.reasoning,
                supersedes=list(verdict.supersedes),
                model=verdict.model,
            )
        )
        status = ClaimStatus.rejected if verdict.verdict is Verdict.reject else ClaimStatus.active
        if verdict.verdict is Verdict.supersede:
            await self._supersede(claim, verdict.supersedes, now)
        await self.session.execute(
            update(MemoryClaim)
            .where(MemoryClaim.id == claim.id)
            .values(
                status=status, supersedes=list(verdict.supersedes), decided_at=now, updated_at=func.now(),
                critic_timeouts=0,  # a decision ends a run of SLA timeouts
            )
        )
        audit.record(
            self.session,
            AuditAction.CLAIM_REJECTED if status is ClaimStatus.rejected else AuditAction.CLAIM_PROMOTED,
            service=SERVICE,
            task_id=claim.task_id,
            claim_id=claim.id,
            payload={"verdict": verdict.verdict.value, "score": verdict.score, "model": verdict.model},
        )
        return ClaimDecided(
            claim_id=claim.id,
            task_id=claim.task_id,
            status=status,
            verdict=verdict.verdict,
            score=verdict.score,
            supersedes=list(verdict.supersedes),
            decided_at=now,
        )

    async def _supersede(self, claim: MemoryClaim, targets: list[uuid.UUID], now: datetime) -> None:
        result = await self.session.execute(
            update(MemoryClaim)
            .where(MemoryClaim.id.in_(targets), MemoryClaim.status == ClaimStatus.active)
            .values(status=ClaimStatus.superseded, superseded_by=claim.id, updated_at=func.now())
            .returning(MemoryClaim.id)
        )
        moved = set(result.scalars())
        if moved != set(targets):
            raise EntityChanged("a claim to supersede is no longer active")
        for old in targets:
            audit.record(
                self.session,
                AuditAction.CLAIM_SUPERSEDED,
                service=SERVICE,
                claim_id=old,
                subject_ids={"superseded_by": claim.id},
                payload={"at": now},
            )
