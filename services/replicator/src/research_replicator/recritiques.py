"""Re-critiques a retraction asked for, released from the ledger at the critic's pace.

A retraction (`retractions.propagate`) holds one re-critique per new `retracted_source` finding
in the ledger (`Ledger.recritiques`), in the same transaction as the finding. `release` publishes
the due ones as `RecritiqueClaim` on `research.claim.recritique` (`Nats-Msg-Id`
`recritique-<finding_id>`, through the declared publisher of `RECRITIQUE`): only as many as keep
`recritique_in_flight` requested and not yet judged by the critic. The retraction handler calls it
once right after its commit, so the first few leave at once; `release_forever` calls it every
`recritique_tick_s` for the rest — whether or not the replicator's schedule is on, since the
retraction consumer always is. A wave of a thousand claims is a thousand rows in the ledger and
at most `recritique_in_flight` messages on the critic's queue.

The re-critiques of the replicator's own runs (`main.Replicator.replicate`) are not held: a run
re-checks at most `claims_per_run` claims, each a full research call, so they cannot come in a
wave.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import RecritiqueClaim, subjects
from research_ledger import UnitOfWork
from research_platform.db import transaction
from research_platform.logging import get_logger
from research_replicator.repository import SERVICE

log = get_logger(__name__)


async def release(
    publisher: Any, sessions: async_sessionmaker[AsyncSession], *, in_flight: int
) -> int:
    """Publish the held re-critiques there is room for through `publisher` (the declared publisher
    of `RECRITIQUE`); returns how many were published."""
    async with transaction(sessions) as session:
        held = UnitOfWork(session, service=SERVICE).recritiques
        due = await held.due(in_flight=in_flight)
        for recritique in due:
            # Published inside the transaction: if the bus refuses, the rest stay held for the next
            # tick, and the message id makes a repeat of the ones already sent harmless.
            await publisher.publish(
                RecritiqueClaim(
                    claim_id=recritique.claim_id,
                    reason=recritique.reason,
                    finding_id=recritique.finding_id,
                ),
                headers={subjects.MSG_ID_HEADER: f"recritique-{recritique.finding_id}"},
            )
        await held.mark_requested([r.finding_id for r in due])
    return len(due)


async def release_forever(
    publisher: Any, sessions: async_sessionmaker[AsyncSession], *, tick_s: float, in_flight: int
) -> None:
    """Every `tick_s`: top the re-critiques in flight up to `in_flight` from the ledger."""
    while True:
        try:
            sent = await release(publisher, sessions, in_flight=in_flight)
            if sent:
                log.info("held re-critiques released", released=sent)
        except Exception as exc:  # noqa: BLE001 - one failed tick must not end the loop
            log.warning("re-critique release failed", error=repr(exc))
        await asyncio.sleep(tick_s)
