"""Token buckets that keep each source at its documented request rate.

A bucket holds up to `burst` tokens and refills at `rate_per_s`; each request takes one token
and waits when none is left. Callers queue in arrival order (an `asyncio.Lock`), so a burst of
concurrent searches is spread over time instead of tripping the source's 429.

The clock and the sleep are injected so tests can drive time by hand; production uses the
event loop's monotonic clock and `asyncio.sleep`. One bucket can be shared by several sources
that draw on the same budget (PubMed and ClinVar both spend the NCBI E-utilities allowance).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class RateBucket(Protocol):
    """What a source's HTTP access needs: wait for a grant (this process's or the fleet's)."""

    async def acquire(self) -> float: ...


class BucketSource(Protocol):
    """Where buckets come from: `RateLimits` (per process) or `SharedRateLimits` (per fleet)."""

    def bucket(self, budget: str, rate_per_s: float, burst: int = 1) -> RateBucket: ...


class TokenBucket:
    """`acquire()` returns when a request may go out; it never raises and never drops a request."""

    def __init__(
        self,
        rate_per_s: float,
        burst: int = 1,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        self.rate_per_s = rate_per_s
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.rate_per_s)
        self._stamp = now

    def available(self) -> float:
        """Tokens in the bucket right now (for status and tests)."""
        self._refill()
        return self._tokens

    async def acquire(self) -> float:
        """Take one token, waiting as long as the rate requires; returns the seconds waited."""
        waited = 0.0
        async with self._lock:
            while True:
                self._refill()
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return waited
                delay = (1.0 - self._tokens) / self.rate_per_s
                waited += delay
                await self._sleep(delay)


class RateLimits:
    """The buckets of one process, by budget name (a source name, or a shared one like `ncbi`)."""

    def __init__(self, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._buckets: dict[str, RateBucket] = {}

    def bucket(self, budget: str, rate_per_s: float, burst: int = 1) -> RateBucket:
        """The bucket of `budget`, created at `rate_per_s` the first time it is asked for."""
        if budget not in self._buckets:
            self._buckets[budget] = self._new(budget, rate_per_s, burst)
        return self._buckets[budget]

    def _new(self, budget: str, rate_per_s: float, burst: int) -> RateBucket:
        return TokenBucket(rate_per_s, burst, clock=self._clock, sleep=self._sleep)
