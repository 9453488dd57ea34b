"""Watched claims (claim verification, `Ledger.watched`): claims the ledger keeps re-verifying, and
their verdicts.

A verification asked with `watch: true` is entered here (`watch`). After every run the verifier
appends the verdict to the history (`record_verdict`) and moves the claim's next due time on by
its interval. The replicator asks for `due` claims on its schedule (or at once, from an admin's
run-once) and publishes a re-verification command for each (`mark_requested` stops it asking
twice while that run is under way). Tables from migration 0007 (`research_platform.tables`).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, Float, func, literal_column, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.deidentified import clean
from research_ledger.tables import ReportRow, VerdictHistoryRow, WatchedClaimRow

DEFAULT_INTERVAL_DAYS = 30.0
# A claim's phase in [0, 1): the first 32 bits of the md5 of its id (the same in Python and SQL).
PHASE_SQL = literal_column(
    "(('x' || substr(md5(watched_claims.verification_id::text), 1, 8))::bit(32)::bigint"
    " / 4294967296.0)",
    Float,
)


def phase(verification_id: uuid.UUID) -> float:
    """The claim's deterministic place in its interval, in [0, 1) (`PHASE_SQL` in the database)."""
    digest = hashlib.md5(str(verification_id).encode(), usedforsecurity=False).hexdigest()
    return int(digest[:8], 16) / 2**32


def jitter(verification_id: uuid.UUID, interval_days: float, spread: float) -> timedelta:
    """How much earlier than its `next_due_at` the claim is asked for: `spread` of its interval
    times its phase. Claims entered together (a bulk import, the survivors of one retraction wave)
    fall due spread over the last `spread` of their interval, each at the same place every time."""
    return timedelta(days=interval_days * spread * phase(verification_id))


__all__ = [
    "DEFAULT_INTERVAL_DAYS",
    "PHASE_SQL",
    "VerdictHistoryRow",
    "WatchedClaimRow",
    "WatchedClaims",
    "jitter",
    "phase",
]


class WatchedClaims:
    """Intent methods on `watched_claims` and `verification_verdicts`, in the caller's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def watch(
        self,
        verification_id: uuid.UUID,
        claim: str,
        *,
        interval_days: float = DEFAULT_INTERVAL_DAYS,
    ) -> bool:
        """Enter a verification's claim as watched (due one interval after now); False when it already is."""
        clean(claim, what="a watched claim")  # refused unless it passed the privacy boundary
        inserted = await self.session.scalar(
            insert(WatchedClaimRow)
            .values(
                verification_id=verification_id,
                claim=claim,
                interval_days=interval_days,
                next_due_at=datetime.now(UTC) + timedelta(days=interval_days),
                runs=0,
            )
            .on_conflict_do_nothing()
            .returning(WatchedClaimRow.verification_id)
        )
        return inserted is not None

    async def get(self, verification_id: uuid.UUID) -> WatchedClaimRow | None:
        return await self.session.get(WatchedClaimRow, verification_id)

    async def history(self, verification_id: uuid.UUID) -> list[VerdictHistoryRow]:
        """The verification's verdicts, oldest first."""
        rows = await self.session.scalars(
            select(VerdictHistoryRow)
            .where(VerdictHistoryRow.verification_id == verification_id)
            .order_by(VerdictHistoryRow.recorded_at)
        )
        return list(rows)

    async def listing(self, *, limit: int = 100) -> list[WatchedClaimRow]:
        """Watched claims, the next due first."""
        rows = await self.session.scalars(
            select(WatchedClaimRow)
            .order_by(WatchedClaimRow.next_due_at, WatchedClaimRow.verification_id)
            .limit(limit)
        )
        return list(rows)

    async def histories(self, verification_ids: Sequence[uuid.UUID]) -> list[VerdictHistoryRow]:
        """The verdicts of every one of `verification_ids`, oldest first (one query)."""
        if not verification_ids:
            return []
        rows = await self.session.scalars(
            select(VerdictHistoryRow)
            .where(VerdictHistoryRow.verification_id.in_(list(verification_ids)))
            .order_by(VerdictHistoryRow.recorded_at, VerdictHistoryRow.run_id)
        )
        return list(rows)

    async def record_verdict(
        self,
        verification_id: uuid.UUID,
        run_id: str,
        verdict: str,
        confidence: str,
        judge: str | None = None,
    ) -> None:
        """Append a run's verdict with the judge that gave it (once per run) and, for a watched
        claim, schedule the next run."""
        await self.session.execute(
            insert(VerdictHistoryRow)
            .values(
                verification_id=verification_id,
                run_id=run_id,
                verdict=verdict,
                confidence=confidence,
                judge=judge,
            )
            .on_conflict_do_nothing()
        )
        await self.session.execute(
            update(WatchedClaimRow)
            .where(WatchedClaimRow.verification_id == verification_id)
            .values(
                requested_run_id=None,
                runs=WatchedClaimRow.runs + 1,
                next_due_at=func.now()
                + func.make_interval(0, 0, 0, 0, 0, 0, WatchedClaimRow.interval_days * 86400),
            )
        )

    async def due(
        self,
        *,
        now: datetime | None = None,
        everything: bool = False,
        limit: int = 100,
        spread: float = 0.0,
    ) -> list[WatchedClaimRow]:
        """Watched claims whose next run is due (all of them when `everything`), earliest first. With
        `spread`, a claim is due `jitter` before its `next_due_at` (see `jitter`). One already
        requested is asked again only a day after it fell due (its run failed or was lost)."""
        moment = now or datetime.now(UTC)
        query = select(WatchedClaimRow).where(
            (WatchedClaimRow.requested_run_id.is_(None))
            | (WatchedClaimRow.next_due_at <= moment - timedelta(days=1))
        )
        effective: ColumnElement[datetime] = WatchedClaimRow.next_due_at.expression
        if spread > 0:
            effective = WatchedClaimRow.next_due_at - func.make_interval(
                0, 0, 0, 0, 0, 0, WatchedClaimRow.interval_days * 86400 * spread * PHASE_SQL
            )
        if not everything:
            query = query.where(effective <= moment)
        return list(
            await self.session.scalars(
                query.order_by(effective).limit(limit).with_for_update(skip_locked=True)
            )
        )

    async def in_flight(self) -> int:
        """Re-verifications asked for and not finished: requested, not lost (under a day past due)
        and the report not failed — what a bounded dispatcher counts against its cap."""
        return int(
            await self.session.scalar(
                select(func.count())
                .select_from(WatchedClaimRow)
                .join(ReportRow, ReportRow.id == WatchedClaimRow.verification_id)
                .where(
                    WatchedClaimRow.requested_run_id.is_not(None),
                    WatchedClaimRow.next_due_at > func.now() - timedelta(days=1),
                    ReportRow.status != "failed",
                )
            )
            or 0
        )

    async def make_due(self, verification_ids: Sequence[uuid.UUID]) -> int:
        """Bring the next run of these watched claims forward to now (a cited source was
        retracted); returns how many are watched."""
        if not verification_ids:
            return 0
        result = await self.session.execute(
            update(WatchedClaimRow)
            .where(WatchedClaimRow.verification_id.in_(list(verification_ids)))
            .values(next_due_at=func.now())
        )
        return int(cast(CursorResult[Any], result).rowcount or 0)  # an UPDATE's result

    async def mark_requested(self, verification_id: uuid.UUID, run_id: str) -> None:
        """The re-verification `run_id` was asked for: `due` leaves the claim out meanwhile."""
        await self.session.execute(
            update(WatchedClaimRow)
            .where(WatchedClaimRow.verification_id == verification_id)
            .values(requested_run_id=run_id)
        )

    async def requests(self, verification_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Any]:
        """The stored request of each watched claim's verification report (the sources and
        filters it was first verified with), by verification id."""
        if not verification_ids:
            return {}
        rows = await self.session.execute(
            select(ReportRow.id, ReportRow.request).where(ReportRow.id.in_(list(verification_ids)))
        )
        return {report_id: request for report_id, request in rows.all()}
