"""CrossRef REST `/works` (search) and `/works/{doi}` (fetch). Ids are `doi:<lower-case DOI>`.

Retraction status (`metadata.retracted`) comes from CrossRef's update metadata: an
`updated-by` entry of type retraction / withdrawal / removal marks the work retracted, an
`update-to` of those types marks the record as the notice itself. The flag is tri-state:
`None` means *unknown* — the record was returned through a field selection (`select=`)
that did not include `updated-by`, so its absence proves nothing. The connector never selects
fields, so its own answers always carry a definite True or False.

The polite pool (`mailto`) allows 10 requests/s, the public pool 5.
"""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import quote

from research_connector.settings import CrossRefSettings
from research_connector.sources.base import Source, clean_text, json_body
from research_contracts import SourceHit, TaskFilters

RETRACTING_UPDATES = {"retraction", "partial_retraction", "withdrawal", "removal"}
# Fields every full CrossRef work record carries; without them the record was `select=`-ed.
FULL_RECORD_MARKERS = ("indexed", "type", "deposited")


def normalise_doi(doi: str) -> str:
    """`https://doi.org/10.1/AbC` → `10.1/abc` (DOIs are case-insensitive)."""
    doi = doi.strip()
    for prefix in (
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi:",
    ):
        if doi.lower().startswith(prefix):
            doi = doi[len(prefix) :]
    return doi.lower()


def _date_parts(work: dict[str, Any]) -> tuple[int | None, date | None]:
    for key in ("published-print", "published-online", "issued", "published", "created"):
        parts = ((work.get(key) or {}).get("date-parts") or [[None]])[0]
        if parts and parts[0]:
            year = int(parts[0])
            if len(parts) >= 3:
                try:
                    return year, date(year, int(parts[1]), int(parts[2]))
                except (TypeError, ValueError):
                    return year, None
            return year, None
    return None, None


def retraction_status(work: dict[str, Any]) -> tuple[bool | None, list[str]]:
    """(retracted True/False/None-for-unknown, the update types CrossRef lists for the work)."""
    updates = [
        str(u.get("type", "")).lower() for u in work.get("updated-by", []) if isinstance(u, dict)
    ]
    title = " ".join(work.get("title") or [])
    if set(updates) & RETRACTING_UPDATES or title.upper().startswith(("RETRACTED", "WITHDRAWN")):
        return True, updates
    if "updated-by" in work or any(marker in work for marker in FULL_RECORD_MARKERS):
        return False, updates
    return None, updates


def parse_work(work: dict[str, Any]) -> SourceHit:
    """One CrossRef work record (full or field-selected) as a hit."""
    doi = normalise_doi(work["DOI"])
    year, when = _date_parts(work)
    retracted, updates = retraction_status(work)
    notice_of = [
        u.get("DOI")
        for u in work.get("update-to", [])
        if str(u.get("type", "")).lower() in RETRACTING_UPDATES
    ]
    authors = []
    for author in work.get("author", []):
        name = " ".join(
            part for part in (author.get("given"), author.get("family")) if part
        ) or author.get("name")
        if name:
            authors.append(name)
    return SourceHit(
        source_id=f"doi:{doi}",
        source="crossref",
        title=clean_text(" ".join(work.get("title") or [])),
        authors=authors,
        venue=clean_text(" ".join((work.get("container-title") or [])[:1])) or None,
        year=year,
        date=when,
        url=work.get("URL") or f"https://doi.org/{doi}",
        abstract=clean_text(work.get("abstract")),
        score=work.get("score"),
        doi=doi,
        metadata={
            "type": work.get("type"),
            "publisher": work.get("publisher"),
            "retracted": retracted,
            "updates": updates,
            "retraction_notice_for": [normalise_doi(d) for d in notice_of if d],
            "cited_by": work.get("is-referenced-by-count"),
            "issn": work.get("ISSN", []),
        },
    )


def parse_works(payload: dict[str, Any]) -> list[SourceHit]:
    """Hits of a `work-list` answer, or the single hit of a `work` answer."""
    message = payload["message"]
    if payload.get("message-type") == "work":
        return [parse_work(message)]
    return [parse_work(item) for item in message["items"]]


def polite(mailto: str | None, **params: Any) -> dict[str, Any]:
    """`params` with the contact address that joins a polite pool (CrossRef, OpenAlex), if one is set."""
    return {**params, "mailto": mailto} if mailto else params


class CrossRefSource(Source):
    """CrossRef (no key; `CONNECTOR__CROSSREF__MAILTO` joins the polite pool)."""

    name = "crossref"
    settings: CrossRefSettings

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        wanted = []
        if filters.year_from:
            wanted.append(f"from-pub-date:{filters.year_from}")
        if filters.year_to:
            wanted.append(f"until-pub-date:{filters.year_to}")
        params = polite(self.settings.mailto, query=query, rows=limit)
        if wanted:
            params["filter"] = ",".join(wanted)
        response = await self.http.request("GET", f"{self.settings.base_url}/works", params=params)
        return parse_works(json_body(response))

    async def _fetch(self, source_id: str) -> SourceHit | None:
        doi = normalise_doi(source_id)
        if not doi.startswith("10."):
            return None
        response = await self.http.request_or_none(
            "GET",
            f"{self.settings.base_url}/works/{quote(doi, safe='/')}",
            params=polite(self.settings.mailto),
        )
        return parse_works(json_body(response))[0] if response is not None else None
