"""Watched claims (claim verification): the replicator's share is the schedule.

Each replicator run (on its interval, or at once through the operator's run-once verb) and the
dispatcher's tick (`dispatch_forever`, every `watched_tick_s`) ask the ledger for watched claims
whose next re-verification is due (`ledger.watched.due`; the interval is the verifier's
`VERIFIER__WATCH_DAYS`, default 30 days) and stage one `RequestVerification` (origin `watch`, a
fresh run id, the sources and filters the claim was first verified with) per claim for
`research.verify.requested` in the outbox, in the unit of work that marks it requested (published
after the commit).

Two settings keep a crowd of claims from firing together. `watched_spread`: a claim is due up to
that share of its interval early, at a place fixed by its id (`research_ledger.watched.jitter`),
so claims entered together are asked for spread over the interval's last part, not in one run.
`watched_in_flight`: at most that many re-verifications are asked for and unfinished at once
(`ledger.watched.in_flight`); the rest wait in the ledger (a retraction wave making thousands
due at once is worked off at the verifier's pace, with no queue on the bus).
The verifier does the work: a new version of the same report, the verdict appended to the
history, and — when the verdict or confidence moved or a cited source is now retracted — a
finding in the replicator's name (`verdict_changed` / `retracted_source`, naming the
verification id), a `verdict_changed` audit row, a run event and `research.verification.changed`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from research_contracts import subjects
from research_contracts.verifications import RequestVerification, verification_run_id
from research_ledger import Ledger
from research_ledger.watched import WatchedClaimRow
from research_platform.broker import Emits
from research_platform.logging import get_logger
from research_replicator.repository import SERVICE
from research_replicator.settings import ReplicatorSettings

log = get_logger(__name__)

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
    again = {
        "verification_id": claim.verification_id,
        "run_id": run_id,
        "claim": claim.claim,
        "watch": True,
        "origin": "watch",
    }
    try:
        return RequestVerification(**again, **asked)
    except ValidationError:
        return RequestVerification(**again)


async def request_due(
    ledger: Ledger,
    *,
    limit: int,
    in_flight: int | None = None,
    spread: float = 0.0,
) -> int:
    """Ask for a re-verification of the due watched claims, each marked requested with its
    command staged in the outbox (one unit of work): at most `limit`, and with `in_flight`, only
    as many as keep the unfinished ones at or under it. Returns how many were requested."""
    requested = 0
    async with ledger.unit_of_work(service=SERVICE) as uow:
        watched = uow.watched
        if in_flight is not None:
            limit = min(limit, in_flight - await watched.in_flight())
        if limit <= 0:
            return 0
        claims = await watched.due(limit=limit, spread=spread)
        requests = await watched.requests([c.verification_id for c in claims])
        for claim in claims:
            run_id = verification_run_id(claim.verification_id, f"w{uuid.uuid4().hex[:8]}")
            command = reverification(claim, requests.get(claim.verification_id), run_id)
            uow.outbox.add(
                subjects.VERIFY_REQUESTED,
                command,
                msg_id=f"verify-{claim.verification_id}-{run_id}",
            )
            await watched.mark_requested(claim.verification_id, run_id)
            requested += 1
    return requested


async def dispatch_forever(ledger: Ledger, settings: ReplicatorSettings) -> None:
    """The dispatcher: every `watched_tick_s`, top the unfinished re-verifications up to
    `watched_in_flight` (at most `watched_per_run` a tick)."""
    while True:
        try:
            sent = await request_due(
                ledger,
                limit=settings.watched_per_run,
                in_flight=settings.watched_in_flight,
                spread=settings.watched_spread,
            )
            if sent:
                log.info("watched claims requested", requested=sent)
        except Exception as exc:  # noqa: BLE001 - one failed tick must not end the loop
            log.warning("watched dispatch failed", error=repr(exc))
        await asyncio.sleep(settings.watched_tick_s)
