"""A report gone stale, told to its run: a `verdict` event `STALE` with why, then `done`.

Two places mark completed reports stale and both tell the runs through `tell_stale`: the
reviewer's sweep (a claim the report rests on was undermined) and the replicator's retraction
handler (a source the report cites was retracted). The status and its audit row are committed
before; the events are best effort — a run that cannot be told is logged, not retried, and one
failure does not keep the others from being told.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nats.js import JetStreamContext

from research_runs.recorder import RunRecorder

log = logging.getLogger(__name__)

STALE_AT_ONCE = 32  # runs told concurrently


@dataclass(frozen=True, slots=True)
class StaleNotice:
    """What one stale report's run hears: `details` is the `STALE` verdict's payload (the report
    id, kind, reason and version, and what made it stale: a claim id or a retraction's origin)."""

    run_id: str
    details: dict[str, Any]


async def tell_stale(
    js: JetStreamContext,
    notices: Iterable[StaleNotice],
    *,
    publisher: Any = None,
    at_once: int = STALE_AT_ONCE,
) -> int:
    """Append `STALE` and `done` to each notice's run, at most `at_once` runs at a time, through
    `publisher` (the service's declared run-event publisher; None: `js` directly). Returns how
    many runs were told; the others are logged."""
    gate = asyncio.Semaphore(at_once)

    async def tell(notice: StaleNotice) -> bool:
        async with gate:
            try:
                recorder = await RunRecorder.resume(
                    js,
                    notice.run_id,
                    agent="ledger",
                    iteration=0,
                    publisher=publisher,
                    report_id=notice.details.get("report_id"),
                )
                await recorder.verdict("STALE", details=notice.details)
                await recorder.done()
            except Exception as exc:  # noqa: BLE001 - best effort, see the module docstring
                log.warning(
                    "stale event of report %s not published on run %s: %r",
                    notice.details.get("report_id"),
                    notice.run_id,
                    exc,
                )
                return False
            return True

    return sum(await asyncio.gather(*(tell(n) for n in notices)))
