"""Connector requests, errors (429s by reason), cache hits and latency per source, read back from
a real `/metrics` scrape after the fan-out searched twice: a recorded CrossRef answer (cached in
real Postgres the first time, served from the cache the second) and Europe PMC answering 429."""

from __future__ import annotations

import httpx
import pytest

from research_connector.cache import AnswerCache
from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_ledger import Ledger
from tests.connector.conftest import clock, fake_api, fixtures_dir, make_sources, recorded  # noqa: F401 - fixtures
from tests.scrape import scrape, value

pytestmark = pytest.mark.integration

CROSSREF = "api.crossref.org"
EUROPEPMC = "www.ebi.ac.uk"


def _read(url: str) -> dict[str, float]:
    samples = scrape(url)
    return {
        "crossref_requests": value(samples, "research_connector_requests_total", source="crossref")
        or 0,
        "crossref_cache_hits": value(
            samples, "research_connector_cache_hits_total", source="crossref"
        )
        or 0,
        "crossref_timed": value(
            samples, "research_connector_request_duration_seconds_count", source="crossref"
        )
        or 0,
        "europepmc_requests": value(
            samples, "research_connector_requests_total", source="europepmc"
        )
        or 0,
        "europepmc_429": value(
            samples, "research_connector_errors_total", source="europepmc", reason="http_429"
        )
        or 0,
        "europepmc_cache_hits": value(
            samples, "research_connector_cache_hits_total", source="europepmc"
        )
        or 0,
    }


async def test_requests_errors_cache_hits_and_latency_per_source(
    make_sources,  # noqa: F811 - the fixture imported above
    fake_api,  # noqa: F811 - the fixture imported above
    recorded,  # noqa: F811 - the fixture imported above
    sessions,
    unique,
    metrics_url,
) -> None:
    fake_api.routes[CROSSREF] = lambda request: httpx.Response(
        200,
        content=recorded("crossref/habanero_cassette_test_works_query__00.json"),
        headers={"content-type": "application/json"},
    )
    fake_api.routes[EUROPEPMC] = lambda request: httpx.Response(
        429, json={}, headers={"Retry-After": "1"}
    )
    registry = make_sources(sessions=sessions, cache=AnswerCache(sessions))
    before = _read(metrics_url)
    for _ in range(2):
        found = await search_all(
            ["crossref", "europepmc"],
            f"ecology {unique}",
            None,
            5,
            10.0,
            registry=registry,
            incidents=Incidents(Ledger(sessions)),
        )
        assert found.degraded == {"europepmc": "http_429"} and found.hits
    after = _read(metrics_url)
    assert {name: after[name] - before[name] for name in after} == {
        "crossref_requests": 1,  # the second search was answered from the cache
        "crossref_cache_hits": 1,
        "crossref_timed": 1,
        "europepmc_requests": 2,  # a degraded answer is never cached
        "europepmc_429": 2,
        "europepmc_cache_hits": 0,
    }
