"""Per-source circuit breakers on a real NATS KV bucket: a source that keeps failing is skipped
without a request, one probe goes out after the cool-down, an answer closes the circuit, and
two connector replicas (two connections, two breaker objects) see one state. Transitions are
audited in real Postgres. Time is a hand-driven clock, never a measured duration."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from nats.aio.client import Client as NATS
from sqlalchemy import func, select

from bench.harness.servers import Servers
from research_connector.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreakers, open_circuit_bucket
from research_connector.incidents import Incidents
from research_ledger import Ledger
from research_ledger.tables import AuditEvent
from research_platform.nats_seeds import connect

pytestmark = pytest.mark.integration

CROSSREF = "api.crossref.org"


class WallClock:
    """Wall-clock seconds that only move when told to."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def _breakers(
    servers: Servers, bucket: str, clock: WallClock, **kwargs
) -> tuple[CircuitBreakers, NATS]:
    nc = await connect(servers.nats_url)
    kv = await open_circuit_bucket(nc, bucket)
    options = {"threshold": 3, "cooldown_s": 30.0, "refresh_s": 0.0, **kwargs}
    return CircuitBreakers(kv, clock=clock, **options), nc


async def test_opens_after_consecutive_failures_skips_then_one_probe_closes_it(
    servers: Servers, unique: str
) -> None:
    clock = WallClock()
    breakers, nc = await _breakers(servers, f"circuits_{unique}", clock)
    try:
        assert await breakers.admit("pubmed")
        await breakers.observe("pubmed", "http_503")
        await breakers.observe("pubmed", None)  # an answer in between: the count starts over
        for _ in range(2):
            await breakers.observe("pubmed", "http_503")
        assert (await breakers.state("pubmed")).state == CLOSED  # two in a row: not yet
        await breakers.observe("pubmed", "timeout")
        opened = await breakers.state("pubmed")
        assert opened.state == OPEN and opened.failures == 3 and opened.reason == "timeout"

        assert not await breakers.admit("pubmed")  # skipped at once
        clock.now += 29.0
        assert not await breakers.admit("pubmed")
        clock.now += 2.0  # past the cool-down: exactly one caller probes
        admitted = await asyncio.gather(*(breakers.admit("pubmed") for _ in range(5)))
        assert admitted.count(True) == 1
        assert (await breakers.state("pubmed")).state == HALF_OPEN

        await breakers.observe("pubmed", None)  # the probe answered
        assert (await breakers.state("pubmed")).state == CLOSED
        assert await breakers.admit("pubmed")
    finally:
        await nc.close()


async def test_a_failed_probe_opens_the_circuit_again_for_a_full_cool_down(
    servers: Servers, unique: str
) -> None:
    clock = WallClock()
    breakers, nc = await _breakers(servers, f"circuits_{unique}", clock, threshold=1)
    try:
        await breakers.observe("crossref", "http_500")
        clock.now += 31.0
        assert await breakers.admit("crossref")  # the probe
        await breakers.observe("crossref", "http_500")
        reopened = await breakers.state("crossref")
        assert reopened.state == OPEN and reopened.since == clock.now
        clock.now += 29.0
        assert not await breakers.admit("crossref")
    finally:
        await nc.close()


async def test_faults_that_say_nothing_about_the_source_never_open_it(
    servers: Servers, unique: str
) -> None:
    clock = WallClock()
    breakers, nc = await _breakers(servers, f"circuits_{unique}", clock, threshold=1)
    try:
        for reason in ("disabled", "not_configured", "phi_refused"):
            await breakers.observe("arxiv", reason)
        assert (await breakers.state("arxiv")).state == CLOSED and await breakers.admit("arxiv")
    finally:
        await nc.close()


async def test_two_replicas_share_one_circuit(servers: Servers, unique: str) -> None:
    clock = WallClock()
    bucket = f"circuits_{unique}"
    first, nc1 = await _breakers(servers, bucket, clock)
    second, nc2 = await _breakers(servers, bucket, clock)
    try:
        await first.observe("europepmc", "http_503")
        await second.observe("europepmc", "http_503")
        await first.observe("europepmc", "http_503")  # three failures seen by two replicas
        assert not await second.admit("europepmc")  # the replica that saw only one skips too
        clock.now += 31.0
        assert await second.admit("europepmc")  # second takes the probe…
        assert not await first.admit("europepmc")  # …so first keeps skipping meanwhile
        await second.observe("europepmc", None)
        assert await first.admit("europepmc")
    finally:
        await nc1.close()
        await nc2.close()


async def test_without_the_bucket_each_replica_keeps_its_own_circuit() -> None:
    clock = WallClock()
    breakers = CircuitBreakers(None, threshold=2, cooldown_s=10.0, clock=clock)
    await breakers.observe("openalex", "http_502")
    await breakers.observe("openalex", "http_502")
    assert not await breakers.admit("openalex")
    clock.now += 11.0
    assert await breakers.admit("openalex") and not await breakers.admit("openalex")
    await breakers.observe("openalex", None)
    assert await breakers.admit("openalex")


async def test_a_down_source_is_skipped_without_requests_and_the_transitions_are_audited(
    servers: Servers, make_sources, fake_api, sessions, unique: str
) -> None:
    clock = WallClock()
    incidents = Incidents(Ledger(sessions))
    nc = await connect(servers.nats_url)
    breakers = CircuitBreakers(
        await open_circuit_bucket(nc, f"circuits_{unique}"),
        threshold=2,
        cooldown_s=30.0,
        refresh_s=0.0,
        on_transition=incidents.circuit_changed,
        clock=clock,
    )
    async with sessions() as session:
        since = int(await session.scalar(select(func.coalesce(func.max(AuditEvent.id), 0))))
    fake_api.routes[CROSSREF] = lambda request: httpx.Response(503, text="down for maintenance")
    try:
        crossref = make_sources(sessions=sessions)["crossref"]
        crossref.breakers = breakers
        for n in range(2):
            assert (await crossref.lookup(f"ecology {unique} {n}")).degraded == "http_503"
        asked = fake_api.count(CROSSREF)
        assert asked == 6  # two lookups, each with its two retries
        skipped = await crossref.lookup(f"ecology {unique} skipped")
        assert skipped.degraded == "circuit_open" and skipped.hits == []
        assert fake_api.count(CROSSREF) == asked  # no request went out

        fake_api.routes[CROSSREF] = lambda request: httpx.Response(
            200, json={"status": "ok", "message": {"items": []}}
        )
        clock.now += 31.0
        answered = await crossref.lookup(f"ecology {unique} probe")
        assert answered.degraded is None and fake_api.count(CROSSREF) == asked + 1
        assert (await breakers.state("crossref")).state == CLOSED
    finally:
        await nc.close()
    async with sessions() as session:
        rows = list(
            await session.scalars(
                select(AuditEvent)
                .where(AuditEvent.id > since, AuditEvent.action.like("connector.circuit_%"))
                .order_by(AuditEvent.id)
            )
        )
    assert [(r.action, r.payload["previous"]) for r in rows] == [
        ("connector.circuit_opened", "closed"),
        ("connector.circuit_closed", "half_open"),
    ]
    assert rows[0].payload["failures"] == 2 and rows[0].payload["reason"] == "http_503"
    assert rows[0].service == "connector" and rows[0].subject_ids == {"source": "crossref"}
