"""Rate limits shared by every connector replica, kept in a NATS JetStream key-value bucket.

A per-process `TokenBucket` lets three replicas send three times a source's published rate.
Here each budget (`pubmed`, `ncbi`, `crossref` …) is one key of the KV bucket
`connector_rate_limits` holding the budget's *theoretical arrival time* (GCRA, the
token-bucket rule written as one timestamp):

    grant_at = max(now, tat - (burst - 1) / rate)      # when this request may go out
    tat'     = max(tat, now) + 1 / rate                # written with compare-and-set

Replicas race with `update(key, tat', last=revision)`; the loser re-reads and retries, so every
grant is accounted for exactly once across the fleet, and at most `rate × window + burst`
requests go out in any window, whatever the number of replicas. The timestamp is wall-clock
time (`time.time`), shared by processes on one machine and NTP-close across machines.

If the KV bucket cannot be reached (NATS restarting, a leader election), the replica falls back
to its own `TokenBucket` at the same rate and logs a warning: requests slow down rather than
stop, and the shared accounting resumes with the next grant.
"""

from __future__ import annotations

import asyncio
import time

import nats.errors
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from research_connector.buckets import open_shared_bucket
from research_connector.ratelimit import Clock, RateBucket, RateLimits, Sleep, TokenBucket
from research_platform.logging import get_logger

log = get_logger(__name__)

KV_BUCKET = "connector_rate_limits"
# Races lost in a row before giving up on the shared count for one request (fallback: local bucket).
MAX_RACES = 50


async def open_rate_bucket(nc: nats.NATS, replicas: int | None = None) -> KeyValue:
    """The KV bucket of the shared limits (see `buckets.py`)."""
    return await open_shared_bucket(
        nc, KV_BUCKET, "connector rate limits: one GCRA timestamp per budget", replicas
    )


class SharedTokenBucket:
    """A token bucket whose state lives in the KV bucket; `acquire()` as in `TokenBucket`."""

    def __init__(
        self,
        kv: KeyValue,
        budget: str,
        rate_per_s: float,
        burst: int = 1,
        *,
        clock: Clock = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        # The local bucket for when the KV bucket cannot be reached; it also checks the rate.
        self._fallback = TokenBucket(rate_per_s, burst, sleep=sleep)
        self.budget = budget
        self.rate_per_s = rate_per_s
        self.burst = self._fallback.burst
        self._kv = kv
        self._clock = clock
        self._sleep = sleep

    async def acquire(self) -> float:
        """Take one grant from the fleet-wide budget, waiting for it; returns the seconds waited."""
        start = self._clock()
        try:
            grant_at = await self._reserve()
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning(
                "shared rate limit unavailable, using the local bucket",
                budget=self.budget,
                error=repr(exc),
            )
            return await self._fallback.acquire()
        delay = grant_at - self._clock()
        if delay > 0:
            await self._sleep(delay)
        return max(0.0, self._clock() - start)

    async def _reserve(self) -> float:
        """Advance the budget's timestamp by one request (compare-and-set); the grant time."""
        interval = 1.0 / self.rate_per_s
        tolerance = (self.burst - 1) * interval
        for _ in range(MAX_RACES):
            now = self._clock()
            try:
                entry = await self._kv.get(self.budget)
                tat, revision = float(entry.value or b"0"), entry.revision
            except KeyNotFoundError:
                tat, revision = 0.0, None
            grant_at = max(now, tat - tolerance)
            new_tat = str(max(tat, now) + interval).encode()
            try:
                if revision is None:
                    await self._kv.create(self.budget, new_tat)
                else:
                    await self._kv.update(self.budget, new_tat, last=revision)
            except KeyWrongLastSequenceError:
                continue  # another replica took a grant first: read its timestamp and go after it
            return grant_at
        raise nats.errors.Error(f"lost {MAX_RACES} races in a row for {self.budget}")


class SharedRateLimits(RateLimits):
    """The shared buckets, by budget name (wall-clock time: shared across processes)."""

    def __init__(
        self, kv: KeyValue, *, clock: Clock = time.time, sleep: Sleep = asyncio.sleep
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self._kv = kv

    def _new(self, budget: str, rate_per_s: float, burst: int) -> RateBucket:
        return SharedTokenBucket(
            self._kv, budget, rate_per_s, burst, clock=self._clock, sleep=self._sleep
        )
