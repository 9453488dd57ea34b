"""Held re-critiques (`Ledger.recritiques`): the critic's second look a retraction asks for, kept
in the ledger and released a few at a time.

    held ─→ requested ─→ settled
    (hold)  (due + mark_requested)  (due settles it: the critic's `research.critic.recritique`
                                     audit row names the finding, or the claim left `active`)

A retraction wave can undermine a thousand claims at once. Each one's re-critique is a row here,
written with its `retracted_source` finding in the retraction's transaction (so it survives a
restart, and a redelivered event, which records no second finding, holds nothing twice). The
replicator asks for `due` rows on a tick and publishes them: at most `in_flight` requested and
not settled at once, so the wave is worked off at the critic's pace in the ledger, not as a
backlog on its queue — the same shape as the watched claims' re-verifications
(`research_ledger.watched`). Nothing is dropped: a held row waits until there is room, and one
requested more than `LOST_AFTER` ago without being settled (its command dead-lettered) stops
counting against the cap rather than blocking it. Table from migration 0014
(`research_platform.tables.HeldRecritique`).
"""

from __future__ import annotations

import typing
import uuid
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import CursorResult, String, cast, exists, func, not_, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.catalogue import AuditAction
from research_ledger.status import ClaimStatus
from research_ledger.tables import AuditEvent, HeldRecritique, MemoryClaim

__all__ = ["LOST_AFTER", "HeldRecritique", "Recritique", "Recritiques"]

LOST_AFTER = timedelta(days=1)
# One releaser at a time across replicas (two-int advisory lock: its own namespace, "RCRT").
LOCK_NAMESPACE, LOCK_KEY = 0x52435254, zlib.crc32(b"held-recritiques") & 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class Recritique:
    """One claim to judge again, because of one finding."""

    claim_id: uuid.UUID
    finding_id: uuid.UUID
    reason: str


class Recritiques:
    """Intent methods on `held_recritiques`, in the caller's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def hold(self, recritiques: Iterable[Recritique]) -> int:
        """Keep these re-critiques until `due` releases them; one per finding (a second hold of the
        same finding is a no-op). Returns how many are new."""
        rows = [
            {"finding_id": r.finding_id, "claim_id": r.claim_id, "reason": r.reason}
            for r in recritiques
        ]
        if not rows:
            return 0
        held = await self.session.scalars(
            insert(HeldRecritique)
            .values(rows)
            .on_conflict_do_nothing()
            .returning(HeldRecritique.finding_id)
        )
        return len(list(held))

    async def due(self, *, in_flight: int, limit: int | None = None) -> list[Recritique]:
        """The held re-critiques to publish now, oldest first: as many as keep the requested and
        unsettled ones at or under `in_flight` (and at most `limit`). Settles the ones the critic
        has finished first. Takes a transaction-level lock, so two replicas releasing at once do
        not both fill the same room; the caller publishes them and calls `mark_requested` in the
        same transaction."""
        await self.session.execute(
            text("SELECT pg_advisory_xact_lock(:ns, :key)"),
            {"ns": LOCK_NAMESPACE, "key": LOCK_KEY},
        )
        await self.settle()
        room = in_flight - await self.in_flight()
        if limit is not None:
            room = min(room, limit)
        if room <= 0:
            return []
        rows = await self.session.scalars(
            select(HeldRecritique)
            .where(HeldRecritique.requested_at.is_(None))
            .order_by(HeldRecritique.held_at, HeldRecritique.finding_id)
            .limit(room)
            .with_for_update(skip_locked=True)
        )
        return [Recritique(r.claim_id, r.finding_id, r.reason) for r in rows]

    async def mark_requested(self, finding_ids: Sequence[uuid.UUID]) -> None:
        """These re-critiques were published: they count against the cap until settled."""
        if finding_ids:
            await self.session.execute(
                update(HeldRecritique)
                .where(HeldRecritique.finding_id.in_(list(finding_ids)))
                .values(requested_at=func.now())
            )

    async def settle(self) -> int:
        """Mark settled the requested re-critiques the critic is done with: it wrote its
        `research.critic.recritique` audit row for the finding, or the claim is no longer `active`
        (withdrawn, quarantined after timeouts, superseded: the critic skips it). Returns how many."""
        judged = exists().where(
            AuditEvent.claim_id == HeldRecritique.claim_id,
            AuditEvent.action == AuditAction.CRITIC_RECRITIQUE.value,
            AuditEvent.subject_ids["finding_id"].astext == cast(HeldRecritique.finding_id, String),
        )
        active = exists().where(
            MemoryClaim.id == HeldRecritique.claim_id,
            MemoryClaim.status == ClaimStatus.active.value,
        )
        result = await self.session.execute(
            update(HeldRecritique)
            .where(
                HeldRecritique.requested_at.is_not(None),
                HeldRecritique.settled_at.is_(None),
                or_(judged, not_(active)),
            )
            .values(settled_at=func.now())
        )
        return int(typing.cast(CursorResult[Any], result).rowcount or 0)  # an UPDATE's result

    async def in_flight(self) -> int:
        """Requested, not settled and not lost (requested under `LOST_AFTER` ago)."""
        return int(
            await self.session.scalar(
                select(func.count())
                .select_from(HeldRecritique)
                .where(
                    HeldRecritique.requested_at.is_not(None),
                    HeldRecritique.settled_at.is_(None),
                    HeldRecritique.requested_at > func.now() - LOST_AFTER,
                )
            )
            or 0
        )

    async def waiting(self) -> int:
        """Held and not yet requested: the backlog the ledger keeps off the critic's queue."""
        return int(
            await self.session.scalar(
                select(func.count())
                .select_from(HeldRecritique)
                .where(HeldRecritique.requested_at.is_(None))
            )
            or 0
        )
