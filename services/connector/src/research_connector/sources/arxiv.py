"""arXiv API (Atom feed from `/query`). Ids are `arxiv:<id without version>`; the version, the
categories, the journal reference and the DOI (when the author gave one) go to `metadata`.

arXiv answers some bad requests with HTTP 200 and an error *entry* (id under
`arxiv.org/api/errors`, title `Error`): that is a `SourceReportedError`, not a paper.
The API terms ask for no more than one request every three seconds.
"""

from __future__ import annotations

import re
from datetime import datetime
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

from research_connector.errors import MalformedPayload, SourceReportedError
from research_connector.sources.base import Source, clean_text
from research_contracts import SourceHit, TaskFilters

NS = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
_ID = re.compile(r"arxiv\.org/abs/(?P<id>.+?)(?:v(?P<version>\d+))?$")


def _entry(entry: Element) -> SourceHit:
    raw_id = (entry.findtext("atom:id", "", NS) or "").strip()
    match = _ID.search(raw_id)
    if not match:
        raise MalformedPayload("arXiv entry id is not an abs/ URL")
    arxiv_id, version = match.group("id"), match.group("version")
    published = (entry.findtext("atom:published", "", NS) or "").strip()
    when = datetime.fromisoformat(published).date() if published else None
    primary = entry.find("arxiv:primary_category", NS)
    doi = (entry.findtext("arxiv:doi", "", NS) or "").strip().lower() or None
    pdf = next(
        (link.get("href") for link in entry.findall("atom:link", NS) if link.get("title") == "pdf"),
        None,
    )
    return SourceHit(
        source_id=f"arxiv:{arxiv_id}",
        source="arxiv",
        title=clean_text(entry.findtext("atom:title", "", NS)),
        authors=[
            clean_text(a.findtext("atom:name", "", NS)) for a in entry.findall("atom:author", NS)
        ],
        venue="arXiv",
        year=when.year if when else None,
        date=when,
        url=f"https://arxiv.org/abs/{arxiv_id}",
        abstract=clean_text(entry.findtext("atom:summary", "", NS)),
        doi=doi,
        metadata={
            "arxiv_id": arxiv_id,
            "version": int(version) if version else None,
            "primary_category": primary.get("term") if primary is not None else None,
            "categories": [c.get("term") for c in entry.findall("atom:category", NS)],
            "journal_ref": clean_text(entry.findtext("arxiv:journal_ref", "", NS)) or None,
            "comment": clean_text(entry.findtext("arxiv:comment", "", NS)) or None,
            "pdf_url": pdf,
            "publication_types": ["Preprint"],
        },
    )


def parse_feed(body: bytes) -> list[SourceHit]:
    """Every entry of an arXiv Atom answer; raises `SourceReportedError` on arXiv's error feed."""
    root = ElementTree.fromstring(body)  # noqa: S314 - expat (>= 2.4.1) caps entity expansion; ElementTree fetches no external entity
    if root.tag != f"{{{NS['atom']}}}feed":
        raise MalformedPayload(f"unexpected arXiv root <{root.tag}>")
    entries = root.findall("atom:entry", NS)
    for entry in entries:
        if "/api/errors" in (entry.findtext("atom:id", "", NS) or ""):
            raise SourceReportedError(clean_text(entry.findtext("atom:summary", "", NS))[:200])
    return [_entry(entry) for entry in entries]


class ArxivSource(Source):
    """arXiv preprints (no key)."""

    name = "arxiv"

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        terms = " AND ".join(f"all:{word}" for word in re.findall(r"[\w\-]+", query)) or "all:*"
        if filters.year_from or filters.year_to:
            low, high = filters.year_from or 1991, filters.year_to or 2999
            terms = f"({terms}) AND submittedDate:[{low}01010000 TO {high}12312359]"
        response = await self.http.request(
            "GET",
            f"{self.settings.base_url}/query",
            params={"search_query": terms, "start": 0, "max_results": limit, "sortBy": "relevance"},
        )
        return parse_feed(response.content)

    async def _fetch(self, source_id: str) -> SourceHit | None:
        ident = source_id.removeprefix("arxiv:").strip()
        response = await self.http.request(
            "GET", f"{self.settings.base_url}/query", params={"id_list": ident, "max_results": 1}
        )
        found = parse_feed(response.content)
        return found[0] if found else None
