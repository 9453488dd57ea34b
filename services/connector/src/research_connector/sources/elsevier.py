"""Elsevier (The Spine Journal, Acta Biomaterialia, The Journal of Arthroplasty — one module)
through Elsevier's documented ScienceDirect Search API (`GET /content/search/sciencedirect`).

The key goes in the `X-ELS-APIKey` header (never the `apiKey` query parameter, which would put
it in URLs); the configured journals restrict the query with `SRCTITLE(...)`. Elsevier answers
an empty result set with a single entry carrying `error: "Result set was empty"`, which is
read as no hits. Ids are `doi:` when the entry has a DOI, else `elsevier:<pii>`. 5 requests/s.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from research_connector.errors import MalformedPayload
from research_connector.sources.base import clean_text, json_body
from research_connector.sources.crossref import normalise_doi
from research_connector.sources.eutils import year_of
from research_connector.sources.publisher import PublisherSource
from research_contracts import SourceHit, TaskFilters


def _plain(value: Any) -> str:
    """Elsevier wraps some values as `[{"$": "..."}]` or `{"$": "..."}`."""
    if isinstance(value, list):
        value = value[0] if value else ""
    if isinstance(value, dict):
        value = value.get("$", "")
    return clean_text(value)


def _authors(entry: dict[str, Any]) -> list[str]:
    block = (
        (entry.get("authors") or {}).get("author")
        if isinstance(entry.get("authors"), dict)
        else None
    )
    if block:
        return [_plain(a) for a in (block if isinstance(block, list) else [block]) if _plain(a)]
    creator = _plain(entry.get("dc:creator"))
    return [creator] if creator else []


def parse_entry(entry: dict[str, Any]) -> SourceHit:
    """One `search-results.entry` as a hit."""
    doi = normalise_doi(_plain(entry.get("prism:doi"))) if entry.get("prism:doi") else None
    pii = _plain(entry.get("pii"))
    if not doi and not pii:
        raise MalformedPayload("Elsevier entry with neither prism:doi nor pii")
    cover = _plain(entry.get("prism:coverDate"))
    try:
        when = date.fromisoformat(cover[:10]) if len(cover) >= 10 else None
    except ValueError:
        when = None
    link = next(
        (
            l.get("@href")
            for l in entry.get("link", [])
            if isinstance(l, dict) and l.get("@ref") == "scidir"
        ),
        None,
    )
    return SourceHit(
        source_id=f"doi:{doi}" if doi else f"elsevier:{pii}",
        source="elsevier",
        title=_plain(entry.get("dc:title")),
        authors=_authors(entry),
        venue=_plain(entry.get("prism:publicationName")) or None,
        year=when.year if when else year_of(cover),
        date=when,
        url=link or _plain(entry.get("prism:url")) or None,
        abstract=_plain(entry.get("dc:description") or entry.get("prism:teaser")),
        doi=doi,
        metadata={
            "pii": pii or None,
            "open_access": entry.get("openaccess") in (True, "true", "1", 1),
        },
    )


def parse_search(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits of a `search-results` answer (Elsevier's empty-set marker entry means none)."""
    entries = payload["search-results"].get("entry", [])
    return [parse_entry(e) for e in entries if not (isinstance(e, dict) and "error" in e)]


class ElsevierSource(PublisherSource):
    """Elsevier journals through the ScienceDirect Search API."""

    name = "elsevier"

    def _query(self, query: str, filters: TaskFilters) -> str:
        text = f"({query})"
        if self.settings.journals:
            text += " AND (" + " OR ".join(f'SRCTITLE("{j}")' for j in self.settings.journals) + ")"
        return text

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        params: dict[str, Any] = {"query": self._query(query, filters), "count": limit}
        if filters.year_from or filters.year_to:
            params["date"] = f"{filters.year_from or 1823}-{filters.year_to or 2999}"
        return await self._searched(params)

    async def _fetch(self, source_id: str) -> SourceHit | None:
        if source_id.startswith("doi:"):
            query = f"DOI({normalise_doi(source_id)})"
        elif source_id.startswith("elsevier:"):
            query = f"PII({source_id.removeprefix('elsevier:')})"
        else:
            return None
        found = await self._searched({"query": query, "count": 1})
        return found[0] if found else None

    async def _searched(self, params: dict[str, Any]) -> list[SourceHit]:
        """The hits of one search request (a search, or a lookup by DOI or PII)."""
        response = await self.http.request(
            "GET",
            f"{self.settings.base_url}{self.settings.search_path}",
            params=params,
            headers=self._headers(),
        )
        return parse_search(json_body(response))
