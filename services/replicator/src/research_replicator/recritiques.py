"""Re-critiques a retraction asked for, released from the ledger at the critic's pace.

A retraction (`retractions.propagate`) holds one re-critique per new `retracted_source` finding
in the ledger (`uow.recritiques`), in the same transaction as the finding. `release` stages
the due ones as `RecritiqueClaim` on `research.claim.recritique` in the outbox (`Nats-Msg-Id`
`recritique-<finding_id>`), marked requested in the same unit of work: only as many as keep
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

from research_contracts import RecritiqueClaim, subjects
from research_ledger import Ledger
from research_platform.logging import get_logger
from research_replicator.repository import SERVICE
from research_replicator.settings import ReplicatorSettings

log = get_logger(__name__)


async def release(ledger: Ledger, *, in_flight: int) -> int:
    """Release the held re-critiques there is room for: each is marked requested and its
    `RecritiqueClaim` staged in the outbox in one unit of work (published after the commit, at
    least once; the message id makes a repeat harmless). Returns how many were released."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        due = await uow.recritiques.due(in_flight=in_flight)
        for recritique in due:
            uow.outbox.add(
                subjects.CLAIM_RECRITIQUE,
                RecritiqueClaim(
                    claim_id=recritique.claim_id,
                    reason=recritique.reason,
                    finding_id=recritique.finding_id,
                ),
                msg_id=f"recritique-{recritique.finding_id}",
            )
        await uow.recritiques.mark_requested([r.finding_id for r in due])
    return len(due)


async def release_forever(ledger: Ledger, settings: ReplicatorSettings) -> None:
    """Every `recritique_tick_s`: top the re-critiques in flight up to `recritique_in_flight` from
    the ledger."""
    while True:
        try:
            sent = await release(ledger, in_flight=settings.recritique_in_flight)
            if sent:
                log.info("held re-critiques released", released=sent)
        except Exception as exc:  # noqa: BLE001 - one failed tick must not end the loop
            log.warning("re-critique release failed", error=repr(exc))
        await asyncio.sleep(settings.recritique_tick_s)
