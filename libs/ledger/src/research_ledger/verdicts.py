"""Verdict-driven claim moves (`Ledger.verdicts`): promote, supersede, reject, quarantine, release, re-critique.

- `decide`: a pending claim is promoted (→ active), promoted superseding older active claims
  of its entity (those → superseded, in the same transaction), or rejected; the verdict row
  is kept. Only one decision per entity at a time (advisory lock), and a verdict reached
  while the entity's active claims changed raises `EntityChanged` so it is judged again.
- `record_timeout`: after `quarantine_after` consecutive SLA timeouts → `critic_quarantine`.
  A decision resets the count, so only consecutive timeouts add up.
- `release`: the operator's drain — quarantined claims go back to `pending` with a fresh count.
- `reconsider`: a re-critique of an active claim; reject withdraws it (→ rejected), anything
  else keeps it; applied once per replicator finding even under redelivery.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, text, update

from research_contracts import ClaimDecided, CriticVerdict, RecritiqueClaim, Verdict
from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.errors import EntityChanged
from research_ledger.status import ClaimStatus
from research_ledger.tables import AuditEvent, CriticVerdictRow, MemoryClaim


class Verdicts(LedgerBase):
    """Intent methods of the critic on `memory_claims` and `critic_verdicts` (`Ledger.verdicts`)."""

    async def active_of_entity(self, entity: str, *, besides: uuid.UUID) -> list[MemoryClaim]:
        rows = await self.session.scalars(
            select(MemoryClaim)
            .where(
                MemoryClaim.entity == entity,
                MemoryClaim.status == ClaimStatus.active,
                MemoryClaim.id != besides,
            )
            .order_by(MemoryClaim.created_at)
        )
        return list(rows)

    async def _lock_entity(self, entity: str) -> None:
        await self.session.execute(
            text("SELECT pg_advisory_xact_lock(hashtext(:entity))"), {"entity": entity}
        )

    async def decide(
        self, claim_id: uuid.UUID, verdict: CriticVerdict, considered: set[uuid.UUID]
    ) -> ClaimDecided | None:
        """Apply `verdict` to a pending claim; None when it is no longer pending (a redelivery)."""
        claim = await self.session.get(MemoryClaim, claim_id, with_for_update=True)
        if claim is None or claim.status != ClaimStatus.pending:
            return None
        # One decision per entity at a time: two pending claims must not both become active unseen.
        await self._lock_entity(claim.entity)
        active_now = {c.id for c in await self.active_of_entity(claim.entity, besides=claim.id)}
        if verdict.verdict is not Verdict.reject and active_now - considered:
            raise EntityChanged("the entity's active claims changed while the claim was judged")
        now = datetime.now(UTC)
        self._keep_verdict(claim.id, verdict, verdict.reasoning, list(verdict.supersedes))
        if verdict.verdict is Verdict.supersede:
            await self.supersede(claim.id, verdict.supersedes, now)
        status = ClaimStatus.rejected if verdict.verdict is Verdict.reject else ClaimStatus.active
        await self.session.execute(
            update(MemoryClaim)
            .where(MemoryClaim.id == claim.id)
            .values(
                status=status,
                supersedes=list(verdict.supersedes),
                decided_at=now,
                updated_at=func.now(),
                critic_timeouts=0,  # a decision ends a run of SLA timeouts
            )
        )
        self.audit(
            AuditAction.CLAIM_REJECTED
            if status is ClaimStatus.rejected
            else AuditAction.CLAIM_PROMOTED,
            task_id=claim.task_id,
            claim_id=claim.id,
            payload=_judged(verdict),
        )
        return _decided(claim, status, verdict, now, supersedes=list(verdict.supersedes))

    async def supersede(self, by: uuid.UUID, targets: list[uuid.UUID], now: datetime) -> None:
        """Move `targets` active → superseded by claim `by`; `EntityChanged` when one is no longer active."""
        result = await self.session.execute(
            update(MemoryClaim)
            .where(MemoryClaim.id.in_(targets), MemoryClaim.status == ClaimStatus.active)
            .values(status=ClaimStatus.superseded, superseded_by=by, updated_at=func.now())
            .returning(MemoryClaim.id)
        )
        if set(result.scalars()) != set(targets):
            raise EntityChanged("a claim to supersede is no longer active")
        for old in targets:
            self.audit(
                AuditAction.CLAIM_SUPERSEDED,
                claim_id=old,
                subject_ids={"superseded_by": by},
                payload={"at": now},
            )

    def _keep_verdict(
        self,
        claim_id: uuid.UUID,
        verdict: CriticVerdict,
        reasoning: str,
        supersedes: list[uuid.UUID],
    ) -> None:
        self.session.add(
            CriticVerdictRow(
                claim_id=claim_id,
                verdict=verdict.verdict.value,
                score=verdict.score,
                reasoning=reasoning,
                supersedes=supersedes,
                model=verdict.model,
            )
        )

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
        ids: dict[str, Any] = {"task_id": task_id, "claim_id": claim_id}
        self.audit(
            AuditAction.CRITIC_TIMEOUT,
            **ids,
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
        self.audit(
            AuditAction.CRITIC_QUARANTINE,
            **ids,
            payload={"timeouts": timeouts, "sla_s": sla_s, "previous_status": str(judged_status)},
        )
        return ClaimDecided(
            claim_id=claim_id, task_id=task_id, status=ClaimStatus.critic_quarantine, decided_at=now
        )

    async def release(
        self, claim_ids: list[uuid.UUID] | None, actor_key_id: str | None
    ) -> list[MemoryClaim]:
        """Move quarantined claims (all, or those of `claim_ids`) back to pending; returns them."""
        query = (
            update(MemoryClaim)
            .where(MemoryClaim.status == ClaimStatus.critic_quarantine)
            .values(
                status=ClaimStatus.pending,
                critic_timeouts=0,
                decided_at=None,
                updated_at=func.now(),
            )
            .returning(MemoryClaim)
        )
        if claim_ids is not None:
            query = query.where(MemoryClaim.id.in_(claim_ids))
        released = list((await self.session.scalars(query)).all())
        for claim in released:
            self.audit(
                AuditAction.CRITIC_DRAINED,
                task_id=claim.task_id,
                claim_id=claim.id,
                subject_ids={"key_id": actor_key_id},
                payload={"status": ClaimStatus.pending.value},
            )
        return released

    async def recritique_applied(self, command: RecritiqueClaim) -> bool:
        """Whether this command (same claim, same finding) was applied before: a redelivery."""
        query = select(AuditEvent.id).where(
            AuditEvent.action == AuditAction.CRITIC_RECRITIQUE.value,
            AuditEvent.claim_id == command.claim_id,
        )
        if command.finding_id is not None:
            query = query.where(
                AuditEvent.subject_ids["finding_id"].astext == str(command.finding_id)
            )
        return await self.session.scalar(query.limit(1)) is not None

    async def reconsider(
        self, command: RecritiqueClaim, verdict: CriticVerdict, discredited: set[str]
    ) -> ClaimDecided | None:
        """Apply a re-critique verdict: reject withdraws the active claim; None when it stays
        active, is no longer active, or the command was applied before."""
        claim = await self.session.get(MemoryClaim, command.claim_id, with_for_update=True)
        if (
            claim is None
            or claim.status != ClaimStatus.active
            or await self.recritique_applied(command)
        ):
            return None
        await self._lock_entity(claim.entity)
        self._keep_verdict(
            claim.id, verdict, f"re-critique ({command.reason}): {verdict.reasoning}", []
        )
        withdrawn = verdict.verdict is Verdict.reject
        now = datetime.now(UTC)
        values: dict[str, object] = {"critic_timeouts": 0, "updated_at": func.now()}
        if withdrawn:
            values.update(status=ClaimStatus.rejected, decided_at=now)
        await self.session.execute(
            update(MemoryClaim).where(MemoryClaim.id == claim.id).values(**values)
        )
        ids: dict[str, Any] = {"task_id": claim.task_id, "claim_id": claim.id}
        self.audit(
            AuditAction.CRITIC_RECRITIQUE,
            **ids,
            subject_ids={"finding_id": command.finding_id},
            payload={
                "reason": command.reason,
                **_judged(verdict),
                "outcome": "rejected" if withdrawn else "kept",
                "discredited_sources": sorted(discredited),
            },
        )
        if not withdrawn:
            return None
        self.audit(
            AuditAction.CLAIM_REJECTED,
            **ids,
            payload={**_judged(verdict), "recritique": True},
        )
        return _decided(claim, ClaimStatus.rejected, verdict, now)


def _judged(verdict: CriticVerdict) -> dict[str, Any]:
    """What an audit row of a decision says of the verdict behind it."""
    return {"verdict": verdict.verdict.value, "score": verdict.score, "model": verdict.model}


def _decided(
    claim: MemoryClaim,
    status: ClaimStatus,
    verdict: CriticVerdict,
    now: datetime,
    *,
    supersedes: list[uuid.UUID] | None = None,
) -> ClaimDecided:
    """The event of `claim` moved to `status` by `verdict` at `now`."""
    return ClaimDecided(
        claim_id=claim.id,
        task_id=claim.task_id,
        status=status,
        verdict=verdict.verdict,
        score=verdict.score,
        supersedes=supersedes or [],
        decided_at=now,
    )
