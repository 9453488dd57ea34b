"""Semantic Scholar Graph API: `/paper/search` and `/paper/search/match` (search),
`/paper/{id}` (fetch; `DOI:`, `PMID:`, `ARXIV:` ids are accepted). Ids are `s2:<paperId>`.

A 404 with `{"error": "Paper with id … not found"}` is an unknown id (fetch → None), not a
degraded source. The optional key travels in the `x-api-key` header (1 request/s).
"""

from __future__ import annotations

from typing import Any

from research_connector.sources.base import Source, clean_text, iso_date, json_body
from research_connector.sources.crossref import normalise_doi
from research_contracts import SourceHit, TaskFilters

FIELDS = (
    "title,abstract,authors,year,venue,externalIds,publicationDate,publicationTypes,url,"
    "citationCount,isOpenAccess,openAccessPdf,journal"
)


def parse_paper(paper: dict[str, Any]) -> SourceHit:
    """One Graph API paper object (any subset of fields) as a hit."""
    external = paper.get("externalIds") or {}
    doi = normalise_doi(external["DOI"]) if external.get("DOI") else None
    when = iso_date(paper.get("publicationDate"))
    pdf = paper.get("openAccessPdf") or {}
    return SourceHit(
        source_id=f"s2:{paper['paperId']}",
        source="semantic_scholar",
        title=clean_text(paper.get("title")),
        authors=[a["name"] for a in paper.get("authors", []) if a.get("name")],
        venue=paper.get("venue") or (paper.get("journal") or {}).get("name") or None,
        year=paper.get("year") or (when.year if when else None),
        date=when,
        url=paper.get("url") or f"https://www.semanticscholar.org/paper/{paper['paperId']}",
        abstract=clean_text(paper.get("abstract")),
        score=paper.get("matchScore"),
        doi=doi,
        metadata={
            "s2_id": paper["paperId"],
            "pmid": external.get("PubMed"),
            "pmcid": f"PMC{external['PubMedCentral']}" if external.get("PubMedCentral") else None,
            "arxiv": external.get("ArXiv"),
            "publication_types": paper.get("publicationTypes") or [],
            "cited_by": paper.get("citationCount"),
            "open_access_pdf": pdf.get("url") or None,
            "open_access_status": pdf.get("status"),
        },
    )


def parse_search(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits of a `/paper/search` or `/paper/search/match` answer (`data` list; absent = none)."""
    return [parse_paper(paper) for paper in payload.get("data", [])]


def not_found(payload: Any) -> bool:
    """Whether a body is the Graph API's `{"error": "... not found"}` answer."""
    return isinstance(payload, dict) and "not found" in str(payload.get("error", "")).lower()


class SemanticScholarSource(Source):
    """Semantic Scholar (optional `x-api-key`)."""

    name = "semantic_scholar"
    key_header = "x-api-key"

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        params: dict[str, Any] = {"query": query, "limit": limit, "fields": FIELDS}
        if filters.year_from or filters.year_to:
            params["year"] = f"{filters.year_from or ''}-{filters.year_to or ''}"
        response = await self.http.request(
            "GET", f"{self.settings.base_url}/paper/search", params=params, headers=self._headers()
        )
        return parse_search(json_body(response))

    async def _fetch(self, source_id: str) -> SourceHit | None:
        prefix, _, ident = source_id.partition(":")
        graph_id = {
            "s2": ident,
            "doi": f"DOI:{ident}",
            "pmid": f"PMID:{ident}",
            "arxiv": f"ARXIV:{ident}",
        }.get(prefix)
        if not graph_id:
            return None
        response = await self.http.request_or_none(
            "GET",
            f"{self.settings.base_url}/paper/{graph_id}",
            params={"fields": FIELDS},
            headers=self._headers(),
        )
        if response is None:
            return None
        payload = json_body(response)
        return None if not_found(payload) else parse_paper(payload)
