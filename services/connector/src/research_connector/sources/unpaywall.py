"""Unpaywall `/v2/search` (title search) and `/v2/{doi}`: where a work can be read openly.
Ids are `doi:`. Unpaywall requires an e-mail (`CONNECTOR__UNPAYWALL__MAILTO`); without one
the source reports `not_configured` instead of sending anonymous requests.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from research_connector.settings import MailtoSettings
from research_connector.sources.base import Source, clean_text, json_body
from research_connector.sources.crossref import normalise_doi
from research_contracts import SourceHit, TaskFilters


def parse_work(work: dict[str, Any]) -> SourceHit:
    """One Unpaywall DOI object as a hit (open-access location in `metadata`)."""
    doi = normalise_doi(work["doi"])
    best = work.get("best_oa_location") or {}
    authors = [
        " ".join(p for p in (a.get("given"), a.get("family")) if p)
        for a in work.get("z_authors") or []
    ]
    return SourceHit(
        source_id=f"doi:{doi}",
        source="unpaywall",
        title=clean_text(work.get("title")),
        authors=[a for a in authors if a],
        venue=work.get("journal_name"),
        year=work.get("year"),
        url=work.get("doi_url") or f"https://doi.org/{doi}",
        doi=doi,
        metadata={
            "is_open_access": work.get("is_oa"),
            "oa_status": work.get("oa_status"),
            "oa_url": best.get("url"),
            "type": work.get("genre"),
        },
    )


def parse_search(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits of a `/v2/search` answer (`results[].response`)."""
    return [parse_work(item["response"]) for item in payload["results"]]


class UnpaywallSource(Source):
    """Unpaywall open-access locations (e-mail required, no key)."""

    name = "unpaywall"
    settings: MailtoSettings

    def configuration_problem(self) -> str | None:
        return super().configuration_problem() or (
            None if self.settings.mailto else "not_configured"
        )

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        response = await self.http.request(
            "GET",
            f"{self.settings.base_url}/search",
            params={"query": query, "email": self.settings.mailto},
        )
        return parse_search(json_body(response))[:limit]

    async def _fetch(self, source_id: str) -> SourceHit | None:
        doi = normalise_doi(source_id)
        response = await self.http.request_or_none(
            "GET",
            f"{self.settings.base_url}/{quote(doi, safe='/')}",
            params={"email": self.settings.mailto},
        )
        return parse_work(json_body(response)) if response is not None else None
