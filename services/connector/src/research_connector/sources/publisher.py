"""Licensed publisher sources without a public search API: a bearer-key JSON search client
whose endpoint and field mapping are settings (`PublisherSettings`).

`GET {base_url}{search_path}?{query_param}=…&{limit_param}=…&{journal_param}=<each journal>`
with `{auth_header}: {auth_scheme} <key>`; the records are found at `results_path` (a dotted
path, empty for a top-level list) and mapped field by field through `fields` (dotted paths).
Unknown `fields` keys land in `metadata`. Without a base URL or key the source reports
`not_configured` and sends nothing. 5 requests/s by default.

NEJM, LWW (JAMA, JBJS, Clinical Orthopaedics), Wiley (JOR, JBMR-B), NCCN, Cochrane and DrugBank
are all this client with their own defaults; Elsevier has a documented API (`elsevier.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from research_connector.errors import MalformedPayload
from research_connector.settings import PublisherSettings
from research_connector.sources.base import Source, clean_text, iso_date, json_body
from research_connector.sources.crossref import normalise_doi
from research_connector.sources.eutils import year_of
from research_contracts import SourceHit, TaskFilters

HIT_FIELDS = {"id", "title", "authors", "year", "date", "doi", "url", "abstract", "venue"}


def dig(record: Any, path: str) -> Any:
    """The value at a dotted `path` inside nested dicts (numeric parts index lists); None if absent."""
    value = record
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [name.strip() for name in value.split(";") if name.strip()]
    names = []
    for item in value if isinstance(value, list) else [value]:
        name = item.get("name") or item.get("$") if isinstance(item, dict) else item
        if name:
            names.append(clean_text(name))
    return names


def map_record(record: dict[str, Any], settings: PublisherSettings, source: str) -> SourceHit:
    """One publisher record as a hit, through the configured field mapping."""
    fields = settings.fields
    ident = dig(record, fields.get("id", "id"))
    if ident in (None, ""):
        raise MalformedPayload(f"{source} record without the `{fields.get('id', 'id')}` id field")
    ident = str(ident)
    doi_value = dig(record, fields["doi"]) if "doi" in fields else None
    doi = normalise_doi(str(doi_value)) if doi_value else None
    if settings.id_prefix == "doi:":
        ident = normalise_doi(ident)
    raw_date = dig(record, fields["date"]) if "date" in fields else None
    when = iso_date(raw_date[:10]) if isinstance(raw_date, str) and len(raw_date) >= 10 else None
    raw_year = dig(record, fields["year"]) if "year" in fields else None
    year = (
        int(raw_year)
        if isinstance(raw_year, int) or (isinstance(raw_year, str) and raw_year.isdigit())
        else None
    )
    return SourceHit(
        source_id=f"{settings.id_prefix}{ident}" if settings.id_prefix else f"{source}:{ident}",
        source=source,
        title=clean_text(dig(record, fields.get("title", "title"))),
        authors=_names(dig(record, fields["authors"])) if "authors" in fields else [],
        venue=clean_text(dig(record, fields["venue"])) or None if "venue" in fields else None,
        year=year or (when.year if when else year_of(str(raw_date) if raw_date else None)),
        date=when,
        url=dig(record, fields["url"]) if "url" in fields else None,
        abstract=clean_text(dig(record, fields["abstract"])) if "abstract" in fields else "",
        doi=doi or (ident if settings.id_prefix == "doi:" else None),
        metadata={key: dig(record, path) for key, path in fields.items() if key not in HIT_FIELDS},
    )


def parse_records(payload: Any, settings: PublisherSettings, source: str) -> list[SourceHit]:
    """Every record found at `results_path` of a publisher answer."""
    records = dig(payload, settings.results_path) if settings.results_path else payload
    if not isinstance(records, list):
        raise MalformedPayload(
            f"{source}: `{settings.results_path or '<top level>'}` is not a list"
        )
    return [map_record(record, settings, source) for record in records]


class PublisherSource(Source):
    """A publisher JSON search API configured entirely by `PublisherSettings`."""

    name: ClassVar[str] = "publisher"
    settings: PublisherSettings

    def configuration_problem(self) -> str | None:
        problem = super().configuration_problem()
        if problem:
            return problem
        return None if self.settings.api_key is not None else "not_configured"

    def _headers(self) -> dict[str, str]:
        assert self.settings.api_key is not None
        key = self.settings.api_key.get_secret_value()
        scheme = self.settings.auth_scheme.strip()
        return {
            self.settings.auth_header: f"{scheme} {key}" if scheme else key,
            "Accept": "application/json",
        }

    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        params: dict[str, Any] = {
            self.settings.query_param: query,
            self.settings.limit_param: limit,
        }
        if self.settings.journals and self.settings.journal_param:
            params[self.settings.journal_param] = list(self.settings.journals)
        if filters.year_from:
            params["year_from"] = filters.year_from
        if filters.year_to:
            params["year_to"] = filters.year_to
        response = await self.http.request(
            "GET",
            f"{self.settings.base_url}{self.settings.search_path}",
            params=params,
            headers=self._headers(),
        )
        return parse_records(json_body(response), self.settings, self.name)

    async def _fetch(self, source_id: str) -> SourceHit | None:
        ident = (
            source_id.removeprefix(self.settings.id_prefix)
            if self.settings.id_prefix
            else source_id.partition(":")[2]
        )
        path = self.settings.fetch_path.format(id=ident)
        response = await self.http.request_or_none(
            "GET", f"{self.settings.base_url}{path}", headers=self._headers()
        )
        if response is None:
            return None
        payload = json_body(response)
        return map_record(payload, self.settings, self.name) if isinstance(payload, dict) else None
