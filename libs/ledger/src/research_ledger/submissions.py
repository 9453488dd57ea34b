"""What each key has submitted (`uow.submissions`, table `key_submissions`): the slots its
quotas count (runs in flight per kind, submissions in the last hour, watched claims).

The gateway decides what a key may submit (`research_gateway.quotas`); this module counts, takes
and frees the slots. A slot frees when its run ends — read from the run's own row: the report's
status and current run, the task's status — when it times out, or when the gateway releases or
cancels it. `lock` serialises one key's admissions for the rest of the transaction.
"""

from __future__ import annotations

import uuid
import zlib
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, exists, func, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert

from research_ledger.base import LedgerBase
from research_ledger.status import TERMINAL_TASK_STATES, ReportStatus
from research_ledger.tables import KeySubmission, ReportRow, ResearchTask

HOUR = timedelta(hours=1)
LOCK_NAMESPACE = zlib.crc32(b"key-quota") & 0x7FFFFFFF
REPORT_KINDS = ("review", "verification", "source_list")


class Submissions(LedgerBase):
    """A key's submission slots, in the unit of work's session."""

    async def lock(self, key_id: uuid.UUID) -> None:
        """Take the transaction-scoped advisory lock of `key_id`: its concurrent admissions run
        one at a time, so a burst never passes its limits."""
        await self.session.execute(
            text("SELECT pg_advisory_xact_lock(:ns, hashtext(:key))"),
            {"ns": LOCK_NAMESPACE, "key": str(key_id)},
        )

    async def take(
        self,
        key_id: uuid.UUID,
        kind: str,
        *,
        subject_id: uuid.UUID | None = None,
        run_id: str | None = None,
        watch: bool = False,
    ) -> int:
        """Record one submission of `kind` by `key_id`; the slot's id."""
        slot: int | None = await self.session.scalar(
            insert(KeySubmission)
            .values(key_id=key_id, kind=kind, subject_id=subject_id, run_id=run_id, watch=watch)
            .returning(KeySubmission.id)
        )
        assert slot is not None
        return slot

    async def release(self, slot: int) -> None:
        """Free a slot whose work ended (a PDF rendered); it still counts for the hour."""
        await self.session.execute(
            update(KeySubmission)
            .where(KeySubmission.id == slot, KeySubmission.released_at.is_(None))
            .values(released_at=func.now())
        )

    async def cancel(self, slot: int) -> None:
        """Forget a slot whose command never went out: nothing was submitted."""
        await self.session.execute(delete(KeySubmission).where(KeySubmission.id == slot))

    async def in_flight(self, key_id: uuid.UUID) -> dict[str, int]:
        """The unreleased slots of `key_id`, per kind (kinds without one are absent)."""
        rows = await self.session.execute(
            select(KeySubmission.kind, func.count())
            .where(KeySubmission.key_id == key_id, KeySubmission.released_at.is_(None))
            .group_by(KeySubmission.kind)
        )
        return {kind: int(count) for kind, count in rows.all()}

    async def last_hour(self, key_id: uuid.UUID) -> int:
        """How many submissions `key_id` made in the last hour (released or not)."""
        recent = await self.session.scalar(
            select(func.count()).where(
                KeySubmission.key_id == key_id, KeySubmission.submitted_at > func.now() - HOUR
            )
        )
        return int(recent or 0)

    async def counted_since(self, key_id: uuid.UUID, skip: int) -> datetime | None:
        """When the submission of `key_id` that leaves the hour's count first, after `skip`
        older ones, was made (oldest first); None when it has none."""
        return await self.session.scalar(
            select(KeySubmission.submitted_at)
            .where(KeySubmission.key_id == key_id, KeySubmission.submitted_at > func.now() - HOUR)
            .order_by(KeySubmission.submitted_at)
            .offset(max(0, skip))
            .limit(1)
        )

    async def now(self) -> datetime:
        """The database's clock (the one every submission time is read against)."""
        now: datetime | None = await self.session.scalar(select(func.now()))
        assert now is not None
        return now

    async def settle(self, key_id: uuid.UUID, *, run_timeout_s: float) -> None:
        """Free the slots of `key_id` whose runs ended: the report finished or moved to another
        run, the task reached a terminal state, or the run is older than `run_timeout_s`; and
        forget the freed submissions that have left the hour."""
        report_ended = exists().where(
            ReportRow.id == KeySubmission.subject_id,
            or_(
                ReportRow.status != ReportStatus.running.value,
                ReportRow.run_id != KeySubmission.run_id,
            ),
        )
        task_ended = exists().where(
            ResearchTask.id == KeySubmission.subject_id,
            ResearchTask.status.in_([s.value for s in TERMINAL_TASK_STATES]),
        )
        timeout = timedelta(seconds=run_timeout_s)
        await self.session.execute(
            update(KeySubmission)
            .where(
                KeySubmission.key_id == key_id,
                KeySubmission.released_at.is_(None),
                or_(
                    KeySubmission.submitted_at < func.now() - timeout,
                    and_(KeySubmission.kind.in_(REPORT_KINDS), report_ended),
                    and_(KeySubmission.kind == "task", task_ended),
                ),
            )
            .values(released_at=func.now())
            .execution_options(synchronize_session=False)
        )
        await self.session.execute(
            delete(KeySubmission).where(
                KeySubmission.key_id == key_id,
                KeySubmission.released_at.is_not(None),
                KeySubmission.submitted_at < func.now() - HOUR,
            )
        )

    async def watched_claims(self, key_id: uuid.UUID) -> int:
        """Watched claims of `key_id`: its `watch` verifications, stored or still being opened."""
        stored = await self.session.scalar(
            select(func.count()).where(
                ReportRow.kind == "verification",
                ReportRow.owner["key_id"].astext == str(key_id),
                ReportRow.request["watch"].as_boolean().is_(True),
            )
        )
        opening = await self.session.scalar(
            select(func.count()).where(
                KeySubmission.key_id == key_id,
                KeySubmission.watch.is_(True),
                KeySubmission.released_at.is_(None),
                ~exists().where(ReportRow.id == KeySubmission.subject_id),
            )
        )
        return int(stored or 0) + int(opening or 0)
