"""Tavily web search (`POST /search`): `tavily` (topic `general`) and `tavily_news` (topic `news`).

Key-gated: without `CONNECTOR__TAVILY__API_KEY` both answer `not_configured` (no request). The
key travels as `Authorization: Bearer <key>`; the JSON body is Tavily's documented request —
`query`, `topic`, `search_depth`, `max_results` (≤ 20), and for a date range `start_date` /
`end_date` (YYYY-MM-DD). The answer's `results[]` carry `title`, `url`, `content` (the snippet),
`score` (0–1) and, for news, `published_date`. Ids are `web:<url>`. 429 / 5xx / timeouts are
retried and then degrade like every source (empty hits + `connector.degraded`).
"""

from __future__ import annotations

from datetime import date, datetime
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar
from urllib.parse import urlparse

from research_connector.errors import MalformedPayload
from research_connector.sources.base import Source, clean_text, json_body
from research_contracts import SourceHit, TaskFilters

MAX_RESULTS = 20  # Tavily's documented ceiling for max_results


def published(value: Any) -> date | None:
    """Tavily's `published_date` (RFC 2822 for news, sometimes ISO 8601) as a date."""
    if not value:
        return None
    text = str(value).strip()
    try:
        return datetime.fromisoformat(text).date()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).date()
    except (TypeError, ValueError):
        return None


def parse_results(payload: dict[str, Any], source: str) -> list[SourceHit]:
    """Hits of a `/search` answer; a body without a `results` list is malformed."""
    results = payload.get("results")
    if not isinstance(results, list):
        raise MalformedPayload("no results list in the Tavily answer")
    hits = []
    for item in results:
        url = str(item["url"])
        when = published(item.get("published_date"))
        site = urlparse(url).netloc.removeprefix("www.")
        hits.append(
            SourceHit(
                source_id=f"web:{url}",
                source=source,
                title=clean_text(item.get("title")) or url,
                venue=site or None,
                year=when.year if when else None,
                date=when,
                url=url,
                abstract=clean_text(item.get("content")),
                score=float(item["score"]) if item.get("score") is not None else None,
                metadata={"site": site, "topic": "news" if source == "tavily_news" else "general"},
            )
        )
    return hits


class TavilySource(Source):
    """Tavily web search, topic `general`."""

    name = "tavily"
    topic: ClassVar[str] = "general"

    def configuration_problem(self) -> str | None:
        return super().configuration_problem() or (
            None if self.settings.api_key is not None else "not_configured"
        )

    def body(self, query: str, filters: TaskFilters, limit: int) -> dict[str, Any]:
        """The documented request body (dates only when the caller set a range)."""
        body: dict[str, Any] = {
            "query": query,
            "topic": self.topic,
            "search_depth": getattr(self.settings, "search_depth", "basic"),
            "max_results": max(1, min(limit, MAX_RESULTS)),
        }
        start = filters.date_from or (date(filters.year_from, 1, 1) if filters.year_from else None)
        end = filters.date_to or (date(filters.year_to, 12, 31) if filters.year_to else None)
        if start:
            body["start_date"] = start.isoformat()
        if end:
            body["end_date"] = end.isoformat()
        return body

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        assert self.settings.api_key is not None  # configuration_problem() said so
        response = await self.http.request(
            "POST",
            f"{self.settings.base_url}/search",
            json=self.body(query, filters, limit),
            headers={"Authorization": f"Bearer {self.settings.api_key.get_secret_value()}"},
        )
        hits = parse_results(json_body(response), self.name)
        if filters.date_from or filters.date_to:  # Tavily filters by date; undated pages are kept
            hits = [
                h
                for h in hits
                if h.date is None
                or (
                    (not filters.date_from or h.date >= filters.date_from)
                    and (not filters.date_to or h.date <= filters.date_to)
                )
            ]
        return hits

    async def _fetch(self, source_id: str) -> SourceHit | None:
        return None  # a web page is read through search; Tavily's /extract is not used here


class TavilyNewsSource(TavilySource):
    """Tavily web search, topic `news` (news sources, publication dates, date-range aware)."""

    name = "tavily_news"
    topic = "news"
