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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import Depends, HTTPException, Request, status

from research_gateway.auth import Caller, Reader
from research_gateway.deps import SERVICE, LedgerDoor, ledger_of
from research_ledger import Ledger, UnitOfWork
from research_platform.settings import GatewayLimitsSettings

Kind = Literal["review", "verification", "source_list", "task", "pdf_export"]
KINDS: tuple[Kind, ...] = ("review", "verification", "source_list", "task", "pdf_export")
HOUR = timedelta(hours=1)

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
    """Per-key quotas: the defaults (`GATEWAY_LIMITS__…`) with the admin's overrides
    (`uow.keys`), and the slots the submissions take (`uow.submissions`)."""

    def __init__(self, ledger: Ledger, defaults: GatewayLimitsSettings) -> None:
        self.ledger = ledger
        self.defaults = defaults

    async def limits(self, uow: UnitOfWork, key_id: uuid.UUID) -> KeyLimits:
        row = await uow.keys.overrides(key_id)
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

    async def overrides(self, uow: UnitOfWork, key_id: uuid.UUID) -> dict[str, int | None]:
        row = await uow.keys.overrides(key_id)
        return {
            "runs_in_flight": row.runs_in_flight if row else None,
            "submissions_per_hour": row.submissions_per_hour if row else None,
            "watched_claims": row.watched_claims if row else None,
        }

    async def use(self, uow: UnitOfWork, key_id: uuid.UUID) -> KeyUse:
        """The key's use now (its finished runs' slots freed first)."""
        await uow.submissions.settle(key_id, run_timeout_s=self.defaults.run_timeout_s)
        in_flight = await uow.submissions.in_flight(key_id)
        return KeyUse(
            in_flight={kind: in_flight.get(kind, 0) for kind in KINDS},
            submissions_last_hour=await uow.submissions.last_hour(key_id),
            watched_claims=await uow.submissions.watched_claims(key_id),
        )

    async def admit(
        self,
        uow: UnitOfWork,
        caller: Caller,
        kind: Kind,
        *,
        subject_id: uuid.UUID | None = None,
        run_id: str | None = None,
        watch: bool = False,
    ) -> int:
        """Take a slot of `caller`'s quota for one `kind` submission, or refuse it (429 with
        `Retry-After` and the reason). Call in a unit of work that commits before the command is
        published; returns the slot's id (`release` it if the command could not go out)."""
        await uow.submissions.lock(caller.key_id)
        if caller.role != "admin":
            await self._check(uow, caller.key_id, kind, watch)
        else:  # exempt, still counted: its ended runs are settled so its rows stay few
            await uow.submissions.settle(caller.key_id, run_timeout_s=self.defaults.run_timeout_s)
        return await uow.submissions.take(
            caller.key_id, kind, subject_id=subject_id, run_id=run_id, watch=watch
        )

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
        """`admit` in a unit of work of its own, then the body (the publish); the slot is
        cancelled when the body fails (a 503: nothing went out)."""
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            slot = await self.admit(
                uow, caller, kind, subject_id=subject_id, run_id=run_id, watch=watch
            )
        try:
            yield slot
        except BaseException:
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                await uow.submissions.cancel(slot)
            raise

    async def _check(self, uow: UnitOfWork, key_id: uuid.UUID, kind: Kind, watch: bool) -> None:
        limits = await self.limits(uow, key_id)
        use = await self.use(uow, key_id)
        if use.submissions_last_hour >= limits.submissions_per_hour:
            oldest = await uow.submissions.counted_since(
                key_id, use.submissions_last_hour - limits.submissions_per_hour
            )
            raise _refused(
                f"this key made {use.submissions_last_hour} expensive submissions in the last hour "
                f"(its limit: submissions_per_hour={limits.submissions_per_hour})",
                await self._seconds_until(uow, oldest + HOUR if oldest else None),
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

    async def _seconds_until(self, uow: UnitOfWork, moment: datetime | None) -> float:
        if moment is None:
            return 1.0
        return (moment - await uow.submissions.now()).total_seconds()


def quotas_of(request: Request, ledger: LedgerDoor) -> Quotas:
    """The quotas over the request's ledger, with the gateway's defaults (`GATEWAY_LIMITS__…`)."""
    defaults = getattr(request.app.state, "limits", None) or GatewayLimitsSettings()
    return Quotas(ledger, defaults)


KeyQuotas = Annotated[Quotas, Depends(quotas_of)]


async def pdf_export_slot(request: Request, caller: Reader) -> AsyncIterator[None]:
    """A route dependency: an export asked as `format=pdf` takes a `pdf_export` slot of the
    caller's quota (429 past it) and frees it when the rendering ends (in units of work of their
    own: the route's is busy with its reads)."""
    if request.query_params.get("format") != "pdf":
        yield
        return
    defaults = getattr(request.app.state, "limits", None) or GatewayLimitsSettings()
    quotas = Quotas(ledger_of(request), defaults)
    async with quotas.ledger.unit_of_work(service=SERVICE) as uow:
        slot = await quotas.admit(uow, caller, "pdf_export")
    try:
        yield
    finally:
        async with quotas.ledger.unit_of_work(service=SERVICE) as uow:
            await uow.submissions.release(slot)


PdfExportSlot = Annotated[None, Depends(pdf_export_slot)]
