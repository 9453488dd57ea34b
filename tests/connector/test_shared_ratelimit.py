"""Three connector replicas share one rate limit (NATS KV) and together keep a source's rate.

Each limiter has its own NATS connection, as three connector processes would. The grants of
all three are pooled and counted in every one-second window; the same harness on three
per-process `TokenBucket`s shows what the shared bucket prevents (three times the rate).
"""

from __future__ import annotations

import asyncio
import time

import pytest

from bench.harness.servers import Servers
from research_connector.ratelimit import RateBucket, TokenBucket
from research_connector.shared_ratelimit import SharedTokenBucket, open_rate_bucket
from research_platform.nats_seeds import connect

pytestmark = pytest.mark.integration

RATE = 10.0  # a source publishing 10 requests/s (OpenAlex, CrossRef polite pool)
PER_REPLICA = 8
REPLICAS = 3


def most_in_any_window(stamps: list[float], window: float = 1.0) -> int:
    """The largest number of grants inside any `window`-second interval."""
    ordered = sorted(stamps)
    best, left = 0, 0
    for right, stamp in enumerate(ordered):
        while stamp - ordered[left] >= window:
            left += 1
        best = max(best, right - left + 1)
    return best


async def grant_times(buckets: list[RateBucket]) -> list[float]:
    """Every replica asks for `PER_REPLICA` grants at once; the wall-clock time of each grant."""
    stamps: list[float] = []

    async def replica(bucket: RateBucket) -> None:
        for _ in range(PER_REPLICA):
            await bucket.acquire()
            stamps.append(time.time())

    await asyncio.gather(*(replica(bucket) for bucket in buckets))
    return stamps


async def test_three_replicas_together_never_exceed_the_published_rate(
    servers: Servers, unique: str
) -> None:
    connections = [await connect(servers.nats_url) for _ in range(REPLICAS)]
    try:
        budget = f"test-{unique}"
        buckets: list[RateBucket] = [
            SharedTokenBucket(await open_rate_bucket(nc), budget, RATE, burst=1)
            for nc in connections
        ]
        started = time.time()
        stamps = await grant_times(buckets)

        assert len(stamps) == REPLICAS * PER_REPLICA  # every request was granted, none dropped
        # rate × 1 s + burst across all replicas, plus one grant for a late wake-up of the event
        # loop (a grant due at t recorded at t + δ); per-process buckets reach 3 × rate here.
        assert most_in_any_window(stamps) <= RATE + 1 + 1
        # Every grant advanced the one shared timestamp by 1/rate: the fleet was counted as one.
        tat = float((await (await open_rate_bucket(connections[0])).get(budget)).value or b"0")
        assert tat >= started + REPLICAS * PER_REPLICA / RATE - 1e-6
        print(
            f"\nshared: {most_in_any_window(stamps)} grants in the busiest second (rate {RATE:.0f}/s)"
        )
    finally:
        for nc in connections:
            await nc.close()


async def test_per_process_buckets_would_send_the_rate_once_per_replica() -> None:
    stamps = await grant_times([TokenBucket(RATE, burst=1) for _ in range(REPLICAS)])
    # The failure the shared limit exists for: three replicas, three times the source's rate.
    assert most_in_any_window(stamps) > 2 * RATE
