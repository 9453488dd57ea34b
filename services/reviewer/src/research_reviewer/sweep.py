"""Living reviews: a completed report whose claims stop being trustworthy becomes `stale`.

One place decides it: `research_ledger`'s `undermined_claims` (a claim left `active`, or an open
eroded / retracted_source / broken_provenance finding names it) and
`mark_reports_stale_for_claim` (status + audit row, one transaction). This module runs that
sweep — on every `research.claim.decided` event that may undermine a claim (`may_undermine`: not
a plain promotion) and on a tick (findings are written by the replicator and librarian without
an event) — and then tells each stale report's run: a
`verdict` event `STALE` with the claim and the reason, followed by `done`, on
`research.run.<run_id>.event`, through the reviewer's declared run-event publisher (so its AsyncAPI
lists them; `research_runs.tell_stale`, as the replicator's retraction handler). It covers every
report kind (reviews, verifications, source lists).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from nats.js import JetStreamContext

from research_contracts import ClaimDecided, ClaimStatus
from research_ledger import Ledger, StaleReport
from research_platform.logging import get_logger
from research_runs import StaleNotice, tell_stale

log = get_logger(__name__)


def may_undermine(event: ClaimDecided) -> bool:
    """False for a plain promotion (a claim became `active` and replaced none): that leaves every
    claim a report rests on as it was, so the sweep — one query over the reports, run per event
    while the pipeline decides ~10 claims a second — is skipped. A reject, a withdrawal, a
    quarantine or a supersede (its targets left `active`) sweeps."""
    return event.status is not ClaimStatus.active or bool(event.supersedes)


async def sweep(
    ledger: Ledger,
    js: JetStreamContext,
    *,
    service: str = "reviewer",
    limit: int = 500,
    publisher: Any = None,
) -> list[StaleReport]:
    """Mark every report resting on an undermined claim stale; returns what changed. `publisher`:
    the declared run-event publisher the events go through (None: `js` directly)."""
    stale: list[tuple[str, StaleReport]] = []
    async with ledger.unit_of_work(service=service) as uow:
        for claim in await uow.reports.undermined_claims(limit=limit):
            stale += [
                (str(claim.claim_id), report)
                for report in await uow.reports.mark_stale(claim.claim_id, claim.reason)
            ]
    for claim_id, report in stale:
        log.info(
            "report stale", report_id=str(report.report_id), claim_id=claim_id, reason=report.reason
        )
    await tell_stale(
        js,
        (
            StaleNotice(report.run_id, report.run_details(claim_id=claim_id))
            for claim_id, report in stale
        ),
        publisher=publisher,
    )
    return [report for _, report in stale]


async def sweep_forever(
    ledger: Ledger,
    js: Callable[[], JetStreamContext],
    interval_s: float,
    publisher: Any = None,
) -> None:
    """The tick: findings have no event, so they are looked for every `interval_s` seconds."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await sweep(ledger, js(), publisher=publisher)
        except Exception as exc:  # noqa: BLE001 - one failed sweep must not end the loop
            log.warning("stale sweep failed", error=repr(exc))
