"""The critic's quarantine and re-critique: what it reads, and the moves it asks the ledger for.

- timeouts and quarantine: `Ledger.record_timeout` (→ `critic_quarantine` after N in a row);
- the operator's drain: `Ledger.release` (→ `pending`, audit with the operator's key id);
- re-critique of an active claim: `Ledger.reconsider` (reject withdraws it), once per finding.
Which cited sources no longer back a claim is the critic's own question, answered here.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import ClaimDecided, CriticVerdict, RecritiqueClaim
from research_critic.repository import SERVICE
from research_ledger import AuditAction, Ledger
from research_platform.models import Finding, MemoryClaim, ResearchSource

RECRITIQUED = AuditAction.CRITIC_RECRITIQUE


class Quarantine:
    """Timeouts, quarantine and drain of claims, in the caller's transaction."""

    def __init__(self, session: AsyncSession) -> None:
        self.ledger = Ledger(session, service=SERVICE)

    async def record_timeout(
        self, claim_id: uuid.UUID, *, judged_status: str, quarantine_after: int, sla_s: float
    ) -> ClaimDecided | None:
        """Count one SLA timeout; returns the quarantine event when this one was the last straw."""
        return await self.ledger.record_timeout(
            claim_id, judged_status=judged_status, quarantine_after=quarantine_after, sla_s=sla_s
        )

    async def release(self, claim_ids: list[uuid.UUID] | None, actor_key_id: str | None) -> list[MemoryClaim]:
        """Move quarantined claims (all, or those of `claim_ids`) back to pending; returns them."""
        return await self.ledger.release(claim_ids, actor_key_id)


class Recritiques:
    """Re-critique of active claims the replicator found eroded or retracted."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ledger = Ledger(session, service=SERVICE)

    async def already_applied(self, command: RecritiqueClaim) -> bool:
        """Whether this command (same claim, same finding) was applied before: a redelivery."""
        return await self.ledger.recritique_applied(command)

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
        """Apply the re-critique verdict; None when the claim stays active, is no longer active, or was done before."""
        return await self.ledger.reconsider(command, verdict, discredited)
