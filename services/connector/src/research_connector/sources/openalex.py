"""OpenAlex `/works` (search) and `/works/{id}` (fetch). Ids are `openalex:W…`.

The abstract is rebuilt from OpenAlex's inverted index; `is_retracted` and the open-access
status are carried in `metadata`. A `mailto` joins the polite pool (10 requests/s).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from research_connector.settings import MailtoSettings
from research_connector.sources.base import Source, clean_text, iso_date, json_body
from research_connector.sources.crossref import normalise_doi, polite
from research_contracts import SourceHit, TaskFilters


def abstract_from_index(index: dict[str, list[int]] | None) -> str:
    """Rebuild the abstract text from `abstract_inverted_index` (word → positions)."""
    if not index:
        return ""
    placed = sorted((position, word) for word, positions in index.items() for position in positions)
    return " ".join(word for _, word in placed)


def parse_work(work: dict[str, Any]) -> SourceHit:
    """One OpenAlex work (full, or `select=`-ed down to a few fields) as a hit."""
    openalex_id = (work.get("id") or "").rsplit("/", 1)[-1]
    doi = normalise_doi(work["doi"]) if work.get("doi") else None
    if not openalex_id and not doi:
        raise KeyError("work has neither an OpenAlex id nor a DOI")
    primary = work.get("primary_location") or {}
    when = iso_date(work.get("publication_date"))
    open_access = work.get("open_access") or {}
    return SourceHit(
        source_id=f"openalex:{openalex_id}" if openalex_id else f"doi:{doi}",
        source="openalex",
        title=clean_text(work.get("title") or work.get("display_name")),
        authors=[
            a["author"]["display_name"]
            for a in work.get("authorships", [])
            if (a.get("author") or {}).get("display_name")
        ],
        venue=((primary.get("source") or {}).get("display_name")) or None,
        year=work.get("publication_year"),
        date=when,
        url=primary.get("landing_page_url")
        or work.get("id")
        or (f"https://doi.org/{doi}" if doi else None),
        abstract=abstract_from_index(work.get("abstract_inverted_index")),
        score=work.get("relevance_score"),
        doi=doi,
        metadata={
            "openalex_id": openalex_id or None,
            "type": work.get("type"),
            "retracted": work.get("is_retracted"),
            "is_open_access": open_access.get("is_oa"),
            "oa_status": open_access.get("oa_status"),
            "oa_url": open_access.get("oa_url"),
            "cited_by": work.get("cited_by_count"),
        },
    )


def parse_works(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits of a `/works` list answer, or the single hit of a `/works/{id}` answer."""
    if "results" in payload:
        return [parse_work(work) for work in payload["results"]]
    return [parse_work(payload)]


class OpenAlexSource(Source):
    """OpenAlex (no key)."""

    name = "openalex"
    settings: MailtoSettings

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        params = polite(self.settings.mailto, search=query, **{"per-page": limit})
        if filters.year_from or filters.year_to:
            params["filter"] = f"publication_year:{filters.year_from or ''}-{filters.year_to or ''}"
        response = await self.http.request("GET", f"{self.settings.base_url}/works", params=params)
        return parse_works(json_body(response))

    async def _fetch(self, source_id: str) -> SourceHit | None:
        if source_id.startswith("openalex:"):
            ident = source_id.removeprefix("openalex:")
        elif source_id.startswith("doi:"):
            ident = f"https://doi.org/{quote(normalise_doi(source_id), safe='/')}"
        else:
            return None
        response = await self.http.request_or_none(
            "GET", f"{self.settings.base_url}/works/{ident}", params=polite(self.settings.mailto)
        )
        return parse_works(json_body(response))[0] if response is not None else None
