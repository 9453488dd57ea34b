"""Watched claims (claim verification): claims the ledger keeps re-verifying, and their verdicts.

A verification asked with `watch: true` is entered here (`watch_claim`). After every run the
verifier appends the verdict to the history (`record_verdict`) and moves the claim's next due
time on by its interval. The replicator asks for `due` claims on its schedule (or at once, from
an admin's run-once) and publishes a re-verification command for each (`mark_requested` stops
it asking twice while that run is under way). Tables from migration 0007.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, Text, func, select, update
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from research_ledger.deidentified import clean
from research_platform.models import Base

DEFAULT_INTERVAL_DAYS = 30.0


class WatchedClaimRow(Base):
    __tablename__ = "watched_claims"

    verification_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True)
    claim: Mapped[str] = mapped_column(Text)
    interval_days: Mapped[float] = mapped_column(Float)
    next_due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    requested_run_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class VerdictHistoryRow(Base):
    __tablename__ = "verification_verdicts"

    verification_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), ForeignKey("reports.id", ondelete="CASCADE"), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    verdict: Mapped[str] = mapped_column(String(40))
    confidence: Mapped[str] = mapped_column(String(20))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


async def watch_claim(session: AsyncSession, verification_id: uuid.UUID, claim: str, *,
                      interval_days: float = DEFAULT_INTERVAL_DAYS) -> bool:
    """Enter a verification's claim as watched (due one interval after now); False when it already is."""
    clean(claim, what="a watched claim")  # refused unless it passed the privacy boundary
    inserted = await session.scalar(
        insert(WatchedClaimRow).values(verification_id=verification_id, claim=claim, interval_days=interval_days,
                                       next_due_at=datetime.now(UTC) + timedelta(days=interval_days), runs=0)
        .on_conflict_do_nothing().returning(WatchedClaimRow.verification_id))
    return inserted is not None


async def watched(session: AsyncSession, verification_id: uuid.UUID) -> WatchedClaimRow | None:
    return await session.get(WatchedClaimRow, verification_id)


async def verdict_history(session: AsyncSession, verification_id: uuid.UUID) -> list[VerdictHistoryRow]:
    rows = await session.scalars(select(VerdictHistoryRow).where(VerdictHistoryRow.verification_id == verification_id)
                                 .order_by(VerdictHistoryRow.recorded_at))
    return list(rows)


async def record_verdict(session: AsyncSession, verification_id: uuid.UUID, run_id: str, verdict: str, confidence: str) -> None:
    """Append a run's verdict (once per run) and, for a watched claim, schedule the next run."""
    await session.execute(insert(VerdictHistoryRow).values(verification_id=verification_id, run_id=run_id, verdict=verdict,
                                                           confidence=confidence).on_conflict_do_nothing())
    await session.execute(
        update(WatchedClaimRow).where(WatchedClaimRow.verification_id == verification_id)
        .values(requested_run_id=None, runs=WatchedClaimRow.runs + 1,
                next_due_at=func.now() + func.make_interval(0, 0, 0, 0, 0, 0, WatchedClaimRow.interval_days * 86400)))


async def due(session: AsyncSession, *, now: datetime | None = None, everything: bool = False, limit: int = 100) -> list[WatchedClaimRow]:
    """Watched claims whose next run is due (all of them when `everything`). One already requested
    is asked again only a day after it fell due (its run failed or was lost)."""
    moment = now or datetime.now(UTC)
    query = select(WatchedClaimRow).where(
        (WatchedClaimRow.requested_run_id.is_(None)) | (WatchedClaimRow.next_due_at <= moment - timedelta(days=1)))
    if not everything:
        query = query.where(WatchedClaimRow.next_due_at <= moment)
    return list(await session.scalars(query.order_by(WatchedClaimRow.next_due_at).limit(limit).with_for_update(skip_locked=True)))


async def mark_requested(session: AsyncSession, verification_id: uuid.UUID, run_id: str) -> None:
    await session.execute(update(WatchedClaimRow).where(WatchedClaimRow.verification_id == verification_id)
                          .values(requested_run_id=run_id))
