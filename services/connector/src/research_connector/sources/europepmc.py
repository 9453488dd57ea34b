"""Europe PMC REST search (`resultType=core`). MEDLINE records get `pmid:` ids (so they merge
with PubMed's), full-text-only records `pmcid:`, anything else `europepmc:<source>:<id>`.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from research_connector.sources.base import Source, clean_text, iso_date, json_body
from research_contracts import SourceHit, TaskFilters


def _source_id(record: dict[str, Any]) -> str:
    if record.get("pmid"):
        return f"pmid:{record['pmid']}"
    if record.get("pmcid"):
        return f"pmcid:{record['pmcid']}"
    return f"europepmc:{record.get('source', 'UNK')}:{record['id']}"


def _first_date(record: dict[str, Any]) -> date | None:
    for key in ("firstPublicationDate", "electronicPublicationDate"):
        when = iso_date(record.get(key))
        if when is not None:
            return when
    return None


def parse_record(record: dict[str, Any]) -> SourceHit:
    """One `resultList.result` record as a hit."""
    journal = (record.get("journalInfo") or {}).get("journal") or {}
    authors = [
        a.get("fullName")
        for a in (record.get("authorList") or {}).get("author", [])
        if a.get("fullName")
    ] or [
        name.strip()
        for name in (record.get("authorString") or "").rstrip(".").split(",")
        if name.strip()
    ]
    types = list((record.get("pubTypeList") or {}).get("pubType", []))
    year = record.get("pubYear")
    doi = record.get("doi")
    return SourceHit(
        source_id=_source_id(record),
        source="europepmc",
        title=clean_text(record.get("title")),
        authors=authors,
        venue=journal.get("title") or None,
        year=int(year) if year and str(year).isdigit() else None,
        date=_first_date(record),
        url=f"https://europepmc.org/article/{record.get('source', 'MED')}/{record['id']}",
        abstract=clean_text(record.get("abstractText")),
        doi=doi or None,
        metadata={
            "europepmc_id": f"{record.get('source')}:{record['id']}",
            "pmid": record.get("pmid"),
            "pmcid": record.get("pmcid"),
            "publication_types": types,
            "retracted": any(t.lower() == "retracted publication" for t in types),
            "is_open_access": record.get("isOpenAccess") == "Y",
            "cited_by": record.get("citedByCount"),
            "keywords": list((record.get("keywordList") or {}).get("keyword", [])),
        },
    )


def parse_search(payload: dict[str, Any]) -> list[SourceHit]:
    """Every record of a `/search` answer (`format=json`)."""
    return [parse_record(record) for record in payload["resultList"]["result"]]


class EuropePmcSource(Source):
    """Europe PMC (no key)."""

    name = "europepmc"

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        text = query
        if filters.year_from or filters.year_to:
            text = (
                f"({query}) AND PUB_YEAR:[{filters.year_from or 1800} TO {filters.year_to or 3000}]"
            )
        return await self._searched(text, pageSize=limit)

    async def _fetch(self, source_id: str) -> SourceHit | None:
        if source_id.startswith("pmcid:"):
            query = f"PMCID:{source_id.removeprefix('pmcid:')}"
        elif source_id.startswith("europepmc:"):
            _, src, ident = source_id.split(":", 2)
            query = f"SRC:{src} AND EXT_ID:{ident}"
        elif source_id.startswith("pmid:"):
            query = f"EXT_ID:{source_id.removeprefix('pmid:')} AND SRC:MED"
        else:
            return None
        found = await self._searched(query)
        return found[0] if found else None

    async def _searched(self, query: str, **params: Any) -> list[SourceHit]:
        """The hits (full records) of one search request (a search, or a lookup by id)."""
        response = await self.http.request(
            "GET",
            f"{self.settings.base_url}/search",
            params={"query": query, "format": "json", "resultType": "core", **params},
        )
        return parse_search(json_body(response))
