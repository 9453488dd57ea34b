"""The 24 h answer cache in Postgres: a repeated request makes no HTTP call, an expired one does,
a degraded answer is never cached. Time is moved by hand, never slept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from research_connector.cache import AnswerCache, request_key

pytestmark = pytest.mark.integration

CROSSREF = "api.crossref.org"


class WallClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def wall() -> WallClock:
    return WallClock()


@pytest.fixture
def crossref_works(fake_api, recorded):
    fake_api.routes[CROSSREF] = lambda request: httpx.Response(
        200, content=recorded("crossref/habanero_cassette_test_works_query__00.json")
    )


def test_the_key_normalises_case_and_spacing() -> None:
    a, _ = request_key("crossref", "search", query="Vitamin  D fracture", limit=5)
    b, request = request_key("crossref", "search", query=" vitamin d   FRACTURE ", limit=5)
    assert a == b and request["query"] == "vitamin d fracture"
    assert a != request_key("crossref", "search", query="vitamin d fracture", limit=6)[0]
    assert a != request_key("openalex", "search", query="vitamin d fracture", limit=5)[0]


async def test_a_cache_hit_makes_no_http_call(
    make_sources, fake_api, sessions, wall, crossref_works, unique
):
    source = make_sources(sessions=sessions, cache=AnswerCache(sessions, now=wall))["crossref"]
    first = await source.lookup(f"Ecology {unique}")
    assert not first.cached and fake_api.count(CROSSREF) == 1
    wall.now += timedelta(hours=23)
    # case and spacing change on the word: an upper-cased token (capitals with digits) reads as a record number
    again = await source.lookup(f"  ecology   {unique} ")
    assert again.cached and fake_api.count(CROSSREF) == 1
    assert again.hits == first.hits


async def test_an_expired_entry_is_asked_again(
    make_sources, fake_api, sessions, wall, crossref_works, unique
):
    source = make_sources(sessions=sessions, cache=AnswerCache(sessions, now=wall))["crossref"]
    await source.lookup(f"ecology {unique}")
    wall.now += timedelta(hours=24, seconds=1)
    answer = await source.lookup(f"ecology {unique}")
    assert not answer.cached and fake_api.count(CROSSREF) == 2


async def test_fetch_is_cached_too(make_sources, fake_api, recorded, sessions, wall):
    fake_api.routes[CROSSREF] = lambda request: httpx.Response(
        200, content=recorded("crossref/habanero_cassette_test_works_with_one_id__00.json")
    )
    source = make_sources(sessions=sessions, cache=AnswerCache(sessions, now=wall))["crossref"]
    wall.now = datetime(2031, 5, 5, tzinfo=UTC)  # a time no other test's entry is fresh at
    first = await source.fetch("doi:10.1371/journal.pone.0033693")
    second = await source.fetch("doi:10.1371/journal.pone.0033693")
    assert first == second and first is not None and fake_api.count(CROSSREF) == 1


async def test_a_degraded_answer_is_not_cached(
    make_sources, fake_api, recorded, sessions, wall, unique
):
    replies = iter([httpx.Response(500), httpx.Response(500), httpx.Response(500)])
    fake_api.routes[CROSSREF] = lambda request: (
        next(replies, None)
        or httpx.Response(
            200, content=recorded("crossref/habanero_cassette_test_works_query__00.json")
        )
    )
    source = make_sources(sessions=sessions, cache=AnswerCache(sessions, now=wall))["crossref"]
    assert (await source.lookup(f"ecology {unique}")).degraded == "http_500"
    answer = await source.lookup(f"ecology {unique}")
    assert answer.degraded is None and not answer.cached and len(answer.hits) == 2


async def test_purge_removes_only_expired_entries(sessions, wall, unique):
    cache = AnswerCache(sessions, ttl_s=60, now=wall)
    wall.now = datetime(2040, 1, 1, tzinfo=UTC)
    key, request = request_key("crossref", "search", query=f"purge {unique}")
    await cache.remember(key, "crossref", request, [])
    assert await cache.recall(key) == []
    wall.now += timedelta(seconds=61)
    assert await cache.recall(key) is None
    assert await cache.purge_expired() >= 1
    wall.now -= timedelta(seconds=61)
    assert await cache.recall(key) is None  # gone, not merely stale
