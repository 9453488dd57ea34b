"""NCBI E-utilities pieces shared by PubMed and ClinVar: request parameters and `esearch`.

Both databases spend one budget (3 requests/s without a key, 10 with one), so the registry
gives them one shared token bucket named `ncbi`. The key travels as the `api_key` query
parameter, which is why no URL is ever logged.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from datetime import date
from typing import Any, ClassVar
from xml.etree import ElementTree

import httpx

from research_connector.errors import MalformedPayload, SourceReportedError
from research_connector.settings import PubMedSettings
from research_connector.sources.base import Source
from research_contracts import SourceHit, TaskFilters

MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}


def eutils_params(settings: PubMedSettings, **params: Any) -> dict[str, Any]:
    """Query parameters with the NCBI etiquette (`tool`, `email`) and the key when there is one."""
    merged: dict[str, Any] = {"tool": settings.tool, **params}
    if settings.email:
        merged["email"] = settings.email
    if settings.api_key is not None:
        merged["api_key"] = settings.api_key.get_secret_value()
    return merged


def date_params(filters: TaskFilters) -> dict[str, Any]:
    """`mindate`/`maxdate` on the publication date for a year filter (E-utilities needs both)."""
    if filters.year_from is None and filters.year_to is None:
        return {}
    return {
        "datetype": "pdat",
        "mindate": str(filters.year_from or 1800),
        "maxdate": str(filters.year_to or 3000),
    }


def parse_esearch(body: bytes | str) -> list[str]:
    """The uids of an esearch answer, in rank order; accepts the JSON and the XML forms."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    stripped = text.lstrip()
    if stripped.startswith("{"):
        payload = json.loads(stripped)
        result = payload["esearchresult"]
        if "ERROR" in result:
            raise SourceReportedError(str(result["ERROR"])[:200])
        return [str(uid) for uid in result.get("idlist", [])]
    if not stripped.startswith("<"):
        raise MalformedPayload("esearch answer is neither JSON nor XML")
    root = ElementTree.fromstring(stripped.encode())  # noqa: S314 - expat (>= 2.4.1) caps entity expansion; ElementTree fetches no external entity
    if root.tag != "eSearchResult":
        raise MalformedPayload(f"unexpected esearch root <{root.tag}>")
    error = root.findtext("ERROR")
    if error:
        raise SourceReportedError(error[:200])
    return [
        (node.text or "").strip()
        for node in root.findall("./IdList/Id")
        if (node.text or "").strip()
    ]


def partial_date(
    year: str | None, month: str | None = None, day: str | None = None
) -> tuple[int | None, date | None]:
    """(year, full date when year, month and day are all known) from E-utilities date parts."""
    if not year or not year.strip()[:4].isdigit():
        return None, None
    y = int(year.strip()[:4])
    m: int | None = None
    if month:
        token = month.strip().lower()[:3]
        m = MONTHS.get(token) or (int(month) if month.strip().isdigit() else None)
    if m and day and day.strip().isdigit():
        try:
            return y, date(y, m, int(day))
        except ValueError:
            return y, None
    return y, None


def year_of(text: str | None) -> int | None:
    """The first four-digit year in a free-text date such as `1998 Dec-1999 Jan` or `2019`."""
    match = re.search(r"\b(1[89]\d{2}|2\d{3})\b", text or "")
    return int(match.group(1)) if match else None


class EutilsSource(Source):
    """A database behind the E-utilities (PubMed, ClinVar): `db` names it, its ids are
    `<prefix><uid>`."""

    settings: PubMedSettings
    db: ClassVar[str]
    prefix: ClassVar[str]

    async def _eutils(self, tool: str, **params: Any) -> httpx.Response:
        """`GET <base_url>/<tool>.fcgi` on this database, with the NCBI etiquette and the key."""
        return await self.http.request(
            "GET",
            f"{self.settings.base_url}/{tool}.fcgi",
            params=eutils_params(self.settings, db=self.db, **params),
        )

    @abstractmethod
    async def _records(self, uids: list[str]) -> list[SourceHit]:
        """The hits of these uids, in their order (none for none)."""

    async def _fetch(self, source_id: str) -> SourceHit | None:
        uid = source_id.removeprefix(self.prefix).strip()
        if not uid.isdigit():
            return None
        found = await self._records([uid])
        return found[0] if found else None
