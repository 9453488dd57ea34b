"""Watched claims (claim verification): the replicator's share is the schedule.

Each replicator run (on its interval, or at once through the operator's run-once verb) asks the
ledger for watched claims whose next re-verification is due (`ledger.watched.due`; the
interval is the verifier's `VERIFIER__WATCH_DAYS`, default 30 days) and publishes one
`RequestVerification` (origin `watch`, a fresh run id, the sources and filters the claim was
first verified with) per claim on `research.verify.requested`, through the declared publisher of
`REVERIFY`.
The verifier does the work: a new version of the same report, the verdict appended to the
history, and — when the verdict or confidence moved or a cited source is now retracted — a
finding in the replicator's name (`verdict_changed` / `retracted_source`, naming the
verification id), a `verdict_changed` audit row, a run event and `research.verification.changed`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import subjects
from research_contracts.verifications import RequestVerification, verification_run_id
from research_ledger import Ledger
from research_ledger.watched import WatchedClaimRow
from research_platform.broker import Emits
from research_platform.db import transaction
from research_platform.models import ReportRow
from research_replicator.repository import SERVICE

REVERIFY = Emits(
    subjects.VERIFY_REQUESTED,
    subjects.VERIFICATIONS_STREAM,
    RequestVerification,
    "replicator.verify_requested",
    "A watched claim whose re-verification is due, for the verifier (origin `watch`, the sources and filters it was "
    "first verified with; `Nats-Msg-Id` `verify-<verification_id>-<run_id>`).",
)


def reverification(
    claim: WatchedClaimRow, request: Mapping[str, Any] | None, run_id: str
) -> RequestVerification:
    """The command that verifies a watched claim again, with the sources and filters it was first
    verified with (kept on its report); a stored request that no longer validates falls back to
    the corpus alone rather than dropping the claim from the schedule."""
    asked = {k: v for k, v in (request or {}).items() if k in ("sources", "filters")}
    try:
        return RequestVerification(
            verification_id=claim.verification_id,
            run_id=run_id,
            claim=claim.claim,
            watch=True,
            origin="watch",
            **asked,
        )
    except ValidationError:
        return RequestVerification(
            verification_id=claim.verification_id,
            run_id=run_id,
            claim=claim.claim,
            watch=True,
            origin="watch",
        )


async def request_due(
    publisher: Any, sessions: async_sessionmaker[AsyncSession], *, limit: int
) -> int:
    """Publish a re-verification for every due watched claim through `publisher` (the declared
    publisher of `REVERIFY`); returns how many were requested."""
    requested = 0
    async with transaction(sessions) as session:
        watched = Ledger(session, service=SERVICE).watched
        claims = await watched.due(limit=limit)
        ids = [c.verification_id for c in claims]
        rows = (
            (
                await session.execute(
                    select(ReportRow.id, ReportRow.request).where(ReportRow.id.in_(ids))
                )
            ).all()
            if ids
            else []
        )
        requests = {report_id: request for report_id, request in rows}
        for claim in claims:
            run_id = verification_run_id(claim.verification_id, f"w{uuid.uuid4().hex[:8]}")
            command = reverification(claim, requests.get(claim.verification_id), run_id)
            # Published inside the transaction: if the bus refuses, the claim stays due for the next run.
            await publisher.publish(
                command,
                headers={subjects.MSG_ID_HEADER: f"verify-{claim.verification_id}-{run_id}"},
            )
            await watched.mark_requested(claim.verification_id, run_id)
            requested += 1
    return requested
