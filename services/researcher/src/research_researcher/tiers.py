"""Tier precedence across every replica: emergency before priority before batched.

Each tier is its own durable pull consumer, so a flood of batched work never sits in front
of an emergency task in one queue. That alone does not stop batched tasks from taking the
CPU while emergency work waits, so before a priority or batched task starts, `TierGate` asks
JetStream about the consumers of the higher tiers: while any of them has messages waiting
(`num_pending`, not yet delivered) or in flight (`num_ack_pending`, delivered to any replica
and not yet acknowledged), the lower-tier task waits. The caller keeps sending `in_progress`
heartbeats meanwhile, so a waiting task is never redelivered.

The counts live in the server, so the rule holds for any number of researcher replicas.
Concurrent tasks of one replica share one answer for `fresh_s` (50 ms by default): a burst of
32 batched tasks asks the server twice, not 64 times, and a higher-tier message still holds
back every lower-tier task that starts more than `fresh_s` after it arrived.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from research_contracts import Tier, subjects
from research_platform.logging import get_logger

log = get_logger(__name__)

# The tiers whose backlog a task of each tier yields to.
AHEAD: dict[Tier, tuple[Tier, ...]] = {
    Tier.emergency: (),
    Tier.priority: (Tier.emergency,),
    Tier.batched: (Tier.emergency, Tier.priority),
}


class TierGate:
    """Holds a lower-tier task back while higher-tier work is waiting or in flight."""

    def __init__(
        self,
        jetstream: Callable[[], JetStreamContext],
        *,
        poll_s: float = 0.25,
        stream: str = subjects.TASKS_STREAM,
        durables: dict[str, str] = subjects.RESEARCHER_DURABLES,
        fresh_s: float = 0.05,
    ) -> None:
        self._jetstream = jetstream
        self._poll_s = poll_s
        self._stream = stream
        self._durables = durables
        self._fresh_s = fresh_s
        self._known: dict[Tier, tuple[float, dict[str, int]]] = {}
        self._asking: dict[Tier, asyncio.Lock] = {}

    async def backlog(self, tier: Tier) -> dict[str, int]:
        """Messages waiting or in flight on each consumer ahead of `tier` (missing consumer = 0);
        one server round trip per tier per `fresh_s`, shared by the tasks asking meanwhile."""
        lock = self._asking.setdefault(tier, asyncio.Lock())
        async with lock:
            known = self._known.get(tier)
            if known is not None and time.monotonic() - known[0] < self._fresh_s:
                return dict(known[1])
            counts = await self._ask(tier)
            self._known[tier] = (time.monotonic(), counts)
            return dict(counts)

    async def _ask(self, tier: Tier) -> dict[str, int]:
        js = self._jetstream()
        counts: dict[str, int] = {}
        for ahead in AHEAD[tier]:
            try:
                info = await js.consumer_info(self._stream, self._durables[ahead.value])
            except NotFoundError:
                counts[ahead.value] = 0
                continue
            counts[ahead.value] = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
        return counts

    async def wait_for_turn(self, tier: Tier) -> float:
        """Return once no higher tier has work; the seconds waited.

        If JetStream cannot be asked (a reconnect in progress), the task goes ahead rather
        than stall: precedence is a scheduling rule, never a reason to lose work.
        """
        if not AHEAD[tier]:
            return 0.0
        started = time.monotonic()
        announced = False
        while True:
            try:
                counts = await self.backlog(tier)
            except (NatsError, TimeoutError) as exc:
                log.warning("tier backlog unknown, not waiting", tier=tier.value, error=repr(exc))
                return time.monotonic() - started
            if not any(counts.values()):
                waited = time.monotonic() - started
                if announced:
                    log.info(
                        "higher tiers drained, starting", tier=tier.value, waited_s=round(waited, 3)
                    )
                return waited
            if not announced:
                log.info("waiting for higher tiers", tier=tier.value, backlog=counts)
                announced = True
            await asyncio.sleep(self._poll_s)
