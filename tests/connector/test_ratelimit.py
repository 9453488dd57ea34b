"""Token buckets hold each source to its documented rate, measured on a hand-driven clock."""

from __future__ import annotations

import asyncio

import pytest

from research_connector.ratelimit import RateLimits, TokenBucket
from tests.connector.conftest import ManualClock

pytestmark = pytest.mark.unit


async def test_requests_beyond_the_burst_wait_for_the_rate() -> None:
    clock = ManualClock()
    bucket = TokenBucket(3.0, burst=1, clock=clock, sleep=clock.sleep)
    start = clock.now
    for _ in range(10):
        await bucket.acquire()
    # 10 requests at 3/s from a full bucket of 1: the last goes out 9/3 = 3 s after the first.
    assert clock.now - start == pytest.approx(3.0)


async def test_a_burst_goes_out_at_once_then_the_rate_applies() -> None:
    clock = ManualClock()
    bucket = TokenBucket(5.0, burst=5, clock=clock, sleep=clock.sleep)
    for _ in range(5):
        assert await bucket.acquire() == 0.0
    assert clock.sleeps == []
    waited = await bucket.acquire()
    assert waited == pytest.approx(0.2)


async def test_idle_time_refills_but_never_beyond_the_burst() -> None:
    clock = ManualClock()
    bucket = TokenBucket(1.0, burst=2, clock=clock, sleep=clock.sleep)
    await bucket.acquire()
    await bucket.acquire()
    clock.now += 100.0  # a long quiet spell
    assert bucket.available() == pytest.approx(2.0)


async def test_concurrent_callers_are_spread_over_time() -> None:
    clock = ManualClock()
    bucket = TokenBucket(1 / 3, burst=1, clock=clock, sleep=clock.sleep)  # arXiv: one per 3 s
    start = clock.now
    await asyncio.gather(*(bucket.acquire() for _ in range(4)))
    assert clock.now - start == pytest.approx(9.0)


def test_shared_budgets_share_one_bucket() -> None:
    limits = RateLimits()
    assert limits.bucket("ncbi", 3.0) is limits.bucket("ncbi", 10.0)
    assert limits.bucket("ncbi", 3.0) is not limits.bucket("crossref", 5.0)
