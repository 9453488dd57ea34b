"""The critic's quarantine and re-critique bookkeeping, each change with its audit row.

- `record_timeout`: a critique of a claim exceeded the SLA; after `quarantine_after` timeouts
  in a row the claim moves to `critic_quarantine` (audit `research.critic.quarantine`). A
  decision resets the count (`Verdicts.decide`), so only consecutive timeouts add up.
- `release`: the operator's drain — quarantined claims go back to `pending` with a fresh
  count (audit `research.critic.drained` with the operator's key id).
- `reconsider`: apply a re-critique verdict to an active claim (reject → `rejected`, anything
  else keeps it active), once per replicator finding even under redelivery.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import ClaimDecided, ClaimStatus, CriticVerdict, RecritiqueClaim, Verdict
from research_critic.repository import SERVICE
from research_ledger import AuditAction, audit
from research_platform.models import AuditEvent, CriticVerdictRow, Finding, MemoryClaim, ResearchSource

RECRITIQUED = AuditAction.CRITIC_RECRITIQUE


class Quarantine:
    """Timeouts, quarantine and drain of claims, in the caller's transaction."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def record_timeout(
        self, claim_id: uuid.UUID, *, judged_status: str, quarantine_after: int, sla_s: float
    ) -> ClaimDecided | None:
        """Count one SLA timeout; returns the quarantine event when this one was the last straw."""
        result = await self.session.execute(
            update(MemoryClaim)
            .where(MemoryClaim.id == claim_id, MemoryClaim.status == judged_status)
            .values(critic_timeouts=MemoryClaim.critic_timeouts + 1, updated_at=func.now())
            .returning(MemoryClaim.critic_timeouts, MemoryClaim.task_id)
        )
        row = result.one_or_none()
        if row is None:  # decided (or drained) meanwhile: this timeout no longer matters
            return None
        timeouts, task_id = row
        audit.record(
            self.session, AuditAction.CRITIC_TIMEOUT, service=SERVICE, task_id=task_id, claim_id=claim_id,
            payload={"timeouts": timeouts, "sla_s": sla_s, "status": judged_status},
        )
        if timeouts < quarantine_after:
            return None
        now = datetime.now(UTC)
        await self.session.execute(
            update(MemoryClaim)
            .where(MemoryClaim.id == claim_id)
            .values(status=ClaimStatus.critic_quarantine, decided_at=now, updated_at=func.now())
        )
        audit.record(
            self.session, AuditAction.CRITIC_QUARANTINE, service=SERVICE, task_id=task_id, claim_id=claim_id,
            payload={"timeouts": timeouts, "sla_s": sla_s, "previous_status": judged_status},
        )
        return ClaimDecided(claim_id=claim_id, task_id=task_id, status=ClaimStatus.critic_quarantine, decided_at=now)

    async def release(self, claim_ids: list[uuid.UUID] | None, actor_key_id: str | None) -> list[MemoryClaim]:
        """Move quarantined claims (all, or those of `claim_ids`) back to pending; returns them."""
        query = (
            update(MemoryClaim)
            .where(MemoryClaim.status == ClaimStatus.critic_quarantine)
            .values(status=ClaimStatus.pending, critic_timeouts=0, decided_at=None, updated_at=func.now())
            .returning(MemoryClaim)
        )
        if claim_ids is not None:
            query = query.where(MemoryClaim.id.in_(claim_ids))
        released = list((await self.session.scalars(query)).all())
        for claim in released:
            audit.record(
                self.session, AuditAction.CRITIC_DRAINED, service=SERVICE, task_id=claim.task_id, claim_id=claim.id,
                subject_ids={"key_id": actor_key_id}, payload={"status": ClaimStatus.pending.value},
            )
        return released


class Recritiques:
    """Re-critique of active claims the replicator found eroded or retracted."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def already_applied(self, command: RecritiqueClaim) -> bool:
        """Whether this command (same claim, same finding) was applied before: a redelivery."""
        query = select(AuditEvent.id).where(AuditEvent.action == RECRITIQUED, AuditEvent.claim_id == command.claim_id)
        if command.finding_id is not None:
            query = query.where(AuditEvent.subject_ids["finding_id"].astext == str(command.finding_id))
        return await self.session.scalar(query.limit(1)) is not None

    async def discredited_sources(self, command: RecritiqueClaim, cited: list[str]) -> set[str]:
        """Cited sources that no longer back the claim: retracted in the ledger, or lost per the finding."""
        gone: set[str] = set()
        if cited:
            gone |= set(
                await self.session.scalars(
                    select(ResearchSource.source_id).where(ResearchSource.source_id.in_(cited), ResearchSource.retracted)
                )
            )
        if command.finding_id is not None:
            payload = await self.session.scalar(
                select(Finding.payload).where(Finding.id == command.finding_id, Finding.expires_at > func.now())
            )
            if payload:
                gone |= set(payload.get("retracted") or []) | set(payload.get("lost") or [])
        return gone & set(cited)

    async def reconsider(
        self, command: RecritiqueClaim, verdict: CriticVerdict, discredited: set[str]
    ) -> ClaimDecided | None:
        """Apply the re-critique verdict; None when the claim is no longer active or it was applied before."""
        claim = await self.session.get(MemoryClaim, command.claim_id, with_for_update=True)
        if claim is None or claim.status != ClaimStatus.active or await self.already_applied(command):
            return None
        await self.session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:entity))"), {"entity": claim.entity})
        self.session.add(
            CriticVerdictRow(claim_id=claim.id, verdict=verdict.verdict.value, score=verdict.score,
                             reasoning=f"re-critique ({command.reason}): {verdict.reasoning}", supersedes=[], model=verdict.model)
        )
        withdrawn = verdict.verdict is Verdict.reject
        now = datetime.now(UTC)
        values = {"critic_timeouts": 0, "updated_at": func.now()}
        if withdrawn:
            values.update(status=ClaimStatus.rejected, decided_at=now)
        await self.session.execute(update(MemoryClaim).where(MemoryClaim.id == claim.id).values(**values))
        audit.record(
            self.session, RECRITIQUED, service=SERVICE, task_id=claim.task_id, claim_id=claim.id,
            subject_ids={"finding_id": command.finding_id},
            payload={"reason": command.reason, "verdict": verdict.verdict.value, "score": verdict.score,
                     "model": verdict.model, "outcome": "rejected" if withdrawn else "kept",
                     "discredited_sources": sorted(discredited)},
        )
        if not withdrawn:
            return None
        audit.record(self.session, AuditAction.CLAIM_REJECTED, service=SERVICE, task_id=claim.task_id,
                     claim_id=claim.id, payload={"verdict": verdict.verdict.value, "score": verdict.score, "recritique": True})
        return ClaimDecided(claim_id=claim.id, task_id=claim.task_id, status=ClaimStatus.rejected,
                            verdict=verdict.verdict, score=verdict.score, decided_at=now)
