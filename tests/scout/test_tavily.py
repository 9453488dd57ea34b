"""The Tavily connector against a local fake HTTP server (a real socket): the documented request
body and headers, both topics with the date range, and fail-soft on 429 / 5xx (empty hits, a
`connector.degraded` audit row on real Postgres, the next call answers again); no key → no request."""

from __future__ import annotations

from datetime import date

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from research_connector.incidents import Incidents
from research_connector.registry import build_sources
from research_connector.settings import ConnectorSettings
from research_contracts import TaskFilters
from research_ledger import Ledger
from research_ledger.tables import AuditEvent
from tests.scout.fakeweb import fake_web

pytestmark = pytest.mark.integration

KEY = "tvly-test-secret-key-123"
# The shape of Tavily's documented /search answer (general and news).
ANSWER = {
    "query": "vitamin d fracture",
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "Vitamin D and fractures: what the trials say",
            "url": "https://www.example.org/vitd",
            "content": "Large trials found that vitamin D alone did not prevent fractures. Combined calcium and vitamin D reduced hip fractures in care homes.",
            "score": 0.91,
            "raw_content": None,
            "published_date": "Mon, 03 Jun 2024 10:00:00 GMT",
        },
        {
            "title": "Old news",
            "url": "https://news.example.com/old",
            "content": "An older article about bones.",
            "score": 0.42,
            "raw_content": None,
            "published_date": "2019-02-01",
        },
    ],
    "response_time": 1.2,
}


def _sources(base_url: str, sessions, *, key: str | None = KEY):
    settings = ConnectorSettings(cache_enabled=False, backoff_base_s=0.01)
    settings.tavily.base_url = base_url
    settings.tavily.api_key = SecretStr(key) if key else None
    settings.tavily.max_retries = 1
    client = httpx.AsyncClient()
    return client, build_sources(settings, client=client, incidents=Incidents(Ledger(sessions)))


async def _degraded_rows(sessions, since: int) -> list[AuditEvent]:
    async with sessions() as session:
        rows = await session.scalars(
            select(AuditEvent).where(
                AuditEvent.id > since, AuditEvent.action == "connector.degraded"
            )
        )
        return [r for r in rows if r.payload.get("source", "").startswith("tavily")]


async def _last_id(sessions) -> int:
    async with sessions() as session:
        return int(
            await session.scalar(select(AuditEvent.id).order_by(AuditEvent.id.desc()).limit(1)) or 0
        )


async def test_general_search_sends_the_documented_request(sessions):
    with fake_web() as web:
        web.default = (200, ANSWER, {})
        client, sources = _sources(web.url, sessions)
        async with client:
            hits = await sources["tavily"].search("vitamin D fracture", limit=50)
    (request,) = web.requests
    assert request["path"] == "/search"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["json"] == {
        "query": "vitamin D fracture",
        "topic": "general",
        "search_depth": "basic",
        "max_results": 20,
    }
    assert [h.source_id for h in hits] == [
        "web:https://www.example.org/vitd",
        "web:https://news.example.com/old",
    ]
    first = hits[0]
    assert (
        first.source == "tavily" and first.venue == "example.org" and first.date == date(2024, 6, 3)
    )
    assert first.abstract.startswith("Large trials found") and first.score == 0.91


async def test_news_search_uses_the_news_topic_and_the_date_range(sessions):
    with fake_web() as web:
        web.default = (200, ANSWER, {})
        client, sources = _sources(web.url, sessions)
        async with client:
            hits = await sources["tavily_news"].search(
                "vitamin D fracture",
                TaskFilters(date_from=date(2024, 1, 1), date_to=date(2024, 12, 31)),
                limit=5,
            )
    body = web.requests[0]["json"]
    assert body["topic"] == "news" and body["max_results"] == 5
    assert body["start_date"] == "2024-01-01" and body["end_date"] == "2024-12-31"
    assert [h.date for h in hits] == [date(2024, 6, 3)]  # the 2019 article is outside the range
    assert hits[0].metadata["topic"] == "news"


@pytest.mark.parametrize("status", [429, 503])
async def test_429_and_5xx_fail_soft_and_the_next_call_answers(sessions, status):
    since = await _last_id(sessions)
    with fake_web() as web:
        web.script = [(status, {"detail": {"error": "slow down"}}, {"Retry-After": "0"})] * 2
        web.default = (200, ANSWER, {})
        client, sources = _sources(web.url, sessions)
        async with client:
            answer = await sources["tavily"].lookup("vitamin D fracture")
            again = await sources["tavily"].lookup("vitamin D fracture")
    assert answer.hits == [] and answer.degraded == f"http_{status}"
    assert len(web.requests) == 3  # one try + one retry, then the next call
    assert len(again.hits) == 2 and again.degraded is None
    (row,) = await _degraded_rows(sessions, since)
    assert row.payload["reason"] == f"http_{status}"
    assert KEY not in str(row.payload)


async def test_without_a_key_nothing_is_sent(sessions):
    with fake_web() as web:
        client, sources = _sources(web.url, sessions, key=None)
        async with client:
            answer = await sources["tavily_news"].lookup("vitamin D fracture")
    assert web.requests == [] and answer.hits == [] and answer.degraded == "not_configured"


async def test_a_body_without_results_is_malformed_not_a_crash(sessions):
    with fake_web() as web:
        web.default = (200, {"detail": "unexpected"}, {})
        client, sources = _sources(web.url, sessions)
        async with client:
            answer = await sources["tavily"].lookup("vitamin D fracture")
    assert answer.hits == [] and answer.degraded == "malformed_payload"
