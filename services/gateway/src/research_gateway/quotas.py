"""What one key may ask of the engine: runs in flight per kind, submissions per hour, watched claims.

The expensive submissions — reviews, verifications, source lists (and their re-runs), tasks and
PDF exports — each take a slot of the key's quota before anything is published:

- a researcher key may have `runs_in_flight` runs of one kind in flight (default 5), make
  `submissions_per_hour` expensive submissions in any hour (default 120, all kinds together) and
  hold `watched_claims` watched claims (default 500); an admin may override any of the three per
  key (`PUT /keys/{key_id}/limits`, `key_limits`); admin keys are exempt (still counted);
- past a limit the answer is 429 with `Retry-After` and the reason (which limit, its value);
- a slot frees when its run completes or fails (read from the run's own row: the report's status
  and current run, the task's status), when it times out (`run_timeout_s`), or when its command
  could not be published; a PDF export holds its slot while it renders.

The counts live in PostgreSQL (`key_submissions`), so every gateway replica sees the same use;
an admission takes a transaction-scoped advisory lock on the key, so a burst of concurrent
requests from one key is admitted one at a time and never past its limits. `GET /me` shows a key
its limits and its use.
"""

from __future__ import annotations

import math
import uuid
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import Depends, HTTPException, Request, status
from sqlalchemy import and_, delete, exists, func, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_gateway.auth import Caller, Reader
from research_gateway.deps import Session
from research_ledger.status import TERMINAL_TASK_STATES, ReportStatus
from research_ledger.tables import KeyLimitsRow, KeySubmission, ReportRow, ResearchTask
from research_platform.settings import GatewayLimitsSettings

Kind = Literal["review", "verification", "source_list", "task", "pdf_export"]
KINDS: tuple[Kind, ...] = ("review", "verification", "source_list", "task", "pdf_export")
REPORT_KINDS = ("review", "verification", "source_list")
HOUR = timedelta(hours=1)
LOCK_NAMESPACE = zlib.crc32(b"key-quota") & 0x7FFFFFFF

# The 429 of a submission past its key's quota, for a route's `responses=` (the OpenAPI document).
QUOTA_RESPONSES: dict[int | str, dict[str, Any]] = {
    429: {
        "description": "this key is past one of its quotas (runs of this kind in flight, submissions "
        "in the last hour, watched claims; the detail names it), or a failed key check past the "
        "throttle's limit: retry after `Retry-After` seconds",
        "headers": {
            "Retry-After": {
                "description": "seconds to wait",
                "schema": {"type": "integer", "minimum": 1},
            }
        },
    },
}


@dataclass(frozen=True)
class KeyLimits:
    """A key's quotas: the setting's defaults with the admin's overrides on top."""

    runs_in_flight: int
    submissions_per_hour: int
    watched_claims: int


@dataclass(frozen=True)
class KeyUse:
    """What a key uses now: runs in flight per kind, submissions in the last hour, watched claims."""

    in_flight: dict[str, int]
    submissions_last_hour: int
    watched_claims: int


def _refused(reason: str, wait: float) -> HTTPException:
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS,
        reason,
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


class Quotas:
    """Per-key quotas in the caller's session (`key_limits`, `key_submissions`)."""

    def __init__(self, session: AsyncSession, defaults: GatewayLimitsSettings) -> None:
        self.session = session
        self.defaults = defaults

    async def limits(self, key_id: uuid.UUID) -> KeyLimits:
        row = await self.session.get(KeyLimitsRow, key_id)
        base = self.defaults
        return KeyLimits(
            runs_in_flight=base.runs_in_flight
            if row is None or row.runs_in_flight is None
            else row.runs_in_flight,
            submissions_per_hour=base.submissions_per_hour
            if row is None or row.submissions_per_hour is None
            else row.submissions_per_hour,
            watched_claims=base.watched_claims
            if row is None or row.watched_claims is None
            else row.watched_claims,
        )

    async def overrides(self, key_id: uuid.UUID) -> dict[str, int | None]:
        row = await self.session.get(KeyLimitsRow, key_id)
        return {
            "runs_in_flight": row.runs_in_flight if row else None,
            "submissions_per_hour": row.submissions_per_hour if row else None,
            "watched_claims": row.watched_claims if row else None,
        }

    async def override(self, key_id: uuid.UUID, values: dict[str, int | None]) -> None:
        """Set `key_id`'s overrides (None = the default)."""
        statement = insert(KeyLimitsRow).values(key_id=key_id, **values)
        await self.session.execute(
            statement.on_conflict_do_update(
                index_elements=[KeyLimitsRow.key_id], set_={**values, "updated_at": func.now()}
            )
        )

    async def use(self, key_id: uuid.UUID) -> KeyUse:
        """The key's use now (its finished runs' slots freed first)."""
        await self._settle(key_id)
        in_flight = dict(
            (
                await self.session.execute(
                    select(KeySubmission.kind, func.count())
                    .where(KeySubmission.key_id == key_id, KeySubmission.released_at.is_(None))
                    .group_by(KeySubmission.kind)
                )
            ).all()
        )
        recent = await self.session.scalar(
            select(func.count()).where(
                KeySubmission.key_id == key_id,
                KeySubmission.submitted_at > func.now() - HOUR,
            )
        )
        return KeyUse(
            in_flight={kind: int(in_flight.get(kind, 0)) for kind in KINDS},
            submissions_last_hour=int(recent or 0),
            watched_claims=await self._watched(key_id),
        )

    async def admit(
        self,
        caller: Caller,
        kind: Kind,
        *,
        subject_id: uuid.UUID | None = None,
        run_id: str | None = None,
        watch: bool = False,
    ) -> int:
        """Take a slot of `caller`'s quota for one `kind` submission, or refuse it (429 with
        `Retry-After` and the reason). Call in a transaction that commits before the command is
        published; returns the slot's id (`release` it if the command could not go out)."""
        await self.session.execute(
            text("SELECT pg_advisory_xact_lock(:ns, hashtext(:key))"),
            {"ns": LOCK_NAMESPACE, "key": str(caller.key_id)},
        )
        if caller.role != "admin":
            await self._check(caller.key_id, kind, watch)
        else:  # exempt, still counted: its ended runs are settled so its rows stay few
            await self._settle(caller.key_id)
        slot = await self.session.scalar(
            insert(KeySubmission)
            .values(
                key_id=caller.key_id, kind=kind, subject_id=subject_id, run_id=run_id, watch=watch
            )
            .returning(KeySubmission.id)
        )
        assert slot is not None
        return slot

    async def release(self, slot: int) -> None:
        """Free a slot whose work ended here (a PDF rendered); it still counts for the hour."""
        await self.session.execute(
            update(KeySubmission)
            .where(KeySubmission.id == slot, KeySubmission.released_at.is_(None))
            .values(released_at=func.now())
        )

    async def cancel(self, slot: int) -> None:
        """Forget a slot whose command never went out (the bus was down): nothing was submitted."""
        await self.session.execute(delete(KeySubmission).where(KeySubmission.id == slot))

    @asynccontextmanager
    async def taken(
        self,
        caller: Caller,
        kind: Kind,
        *,
        subject_id: uuid.UUID | None = None,
        run_id: str | None = None,
        watch: bool = False,
    ) -> AsyncIterator[int]:
        """`admit` in a transaction of its own, then the body (the publish); the slot is cancelled
        when the body fails (a 503: nothing went out)."""
        async with self.session.begin():
            slot = await self.admit(caller, kind, subject_id=subject_id, run_id=run_id, watch=watch)
        try:
            yield slot
        except BaseException:
            async with self.session.begin():
                await self.cancel(slot)
            raise

    async def _check(self, key_id: uuid.UUID, kind: Kind, watch: bool) -> None:
        limits = await self.limits(key_id)
        use = await self.use(key_id)
        if use.submissions_last_hour >= limits.submissions_per_hour:
            oldest = await self.session.scalar(
                select(KeySubmission.submitted_at)
                .where(
                    KeySubmission.key_id == key_id,
                    KeySubmission.submitted_at > func.now() - HOUR,
                )
                .order_by(KeySubmission.submitted_at)
                .offset(max(0, use.submissions_last_hour - limits.submissions_per_hour))
                .limit(1)
            )
            raise _refused(
                f"this key made {use.submissions_last_hour} expensive submissions in the last hour "
                f"(its limit: submissions_per_hour={limits.submissions_per_hour})",
                await self._seconds_until(oldest + HOUR if oldest else None),
            )
        if use.in_flight[kind] >= limits.runs_in_flight:
            raise _refused(
                f"this key has {use.in_flight[kind]} {kind} runs in flight "
                f"(its limit: runs_in_flight={limits.runs_in_flight}); retry when one ends",
                self.defaults.busy_retry_after_s,
            )
        if watch and use.watched_claims >= limits.watched_claims:
            raise _refused(
                f"this key watches {use.watched_claims} claims "
                f"(its limit: watched_claims={limits.watched_claims})",
                3600,
            )

    async def _seconds_until(self, moment: datetime | None) -> float:
        if moment is None:
            return 1.0
        now = await self.session.scalar(select(func.now()))
        assert now is not None
        return (moment - now).total_seconds()

    async def _settle(self, key_id: uuid.UUID) -> None:
        """Free the slots of `key_id` whose runs ended: the report finished or moved to another run,
        the task reached `claimed` or `failed`, or the run timed out; and forget the freed
        submissions that have left the hour."""
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
        timeout = timedelta(seconds=self.defaults.run_timeout_s)
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

    async def _watched(self, key_id: uuid.UUID) -> int:
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


def quotas_of(request: Request, session: Session) -> Quotas:
    """The quotas in the request's session, with the gateway's defaults (`GATEWAY_LIMITS__…`)."""
    defaults = getattr(request.app.state, "limits", None) or GatewayLimitsSettings()
    return Quotas(session, defaults)


KeyQuotas = Annotated[Quotas, Depends(quotas_of)]


async def pdf_export_slot(request: Request, caller: Reader) -> AsyncIterator[None]:
    """A route dependency: an export asked as `format=pdf` takes a `pdf_export` slot of the
    caller's quota (429 past it) and frees it when the rendering ends (in a session of its own:
    the route's is busy with its reads)."""
    if request.query_params.get("format") != "pdf":
        yield
        return
    defaults = getattr(request.app.state, "limits", None) or GatewayLimitsSettings()
    async with request.app.state.sessions() as session, session.begin():
        slot = await Quotas(session, defaults).admit(caller, "pdf_export")
    try:
        yield
    finally:
        async with request.app.state.sessions() as session, session.begin():
            await Quotas(session, defaults).release(slot)


PdfExportSlot = Annotated[None, Depends(pdf_export_slot)]
