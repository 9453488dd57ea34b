"""The one interface every evidence source implements, and the fail-soft path around it.

A source module only knows its API: how to ask (`_search`, `_fetch`) and how to read the
answer (pure `parse_*` functions that the contract tests run on recorded responses). `Source`
wraps them with everything every source must do the same way:

1. refuse a query carrying personal identifiers (audit `connector.phi_refused`, no HTTP);
2. answer from the 24 h cache when it can (no HTTP);
3. otherwise skip a source whose circuit is open (`breaker.py`: degraded `circuit_open`, no
   HTTP, no retries), or call the API under the source's token bucket, with retries (`SourceHttp`);
4. on 429 / 5xx / timeout / transport error / malformed payload: empty hits, WARNING, audit
   `connector.degraded` — never an exception to the caller;
5. apply the year filter the API could not, cap at `limit`, cache the answer.

`lookup` returns the hits together with the reason the source degraded (for the fan-out's
`EvidenceFound.degraded`); `search` and `fetch` are the plain interface.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import date
from typing import Any, ClassVar
from xml.etree.ElementTree import ParseError

from research_connector.breaker import CircuitBreakers
from research_connector.cache import AnswerCache, request_key
from research_connector.errors import MalformedPayload, SourceDegraded
from research_connector.incidents import Incidents
from research_connector.phi import find_identifiers
from research_connector.settings import SourceSettings
from research_connector.transport import SourceHttp
from research_contracts import SourceHit, TaskFilters
from research_platform.logging import get_logger

log = get_logger(__name__)

# What a parser raises when a payload is not the documented shape.
PARSE_ERRORS = (
    json.JSONDecodeError,
    ParseError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
    IndexError,
)


@dataclass
class SourceAnswer:
    """Hits of one source, why it degraded (None when it answered), and whether the cache did."""

    source: str
    hits: list[SourceHit] = field(default_factory=list)
    degraded: str | None = None
    cached: bool = False
    facets: dict[str, dict[str, int]] = field(default_factory=dict)


def within_years(hit: SourceHit, filters: TaskFilters | None) -> bool:
    """Whether `hit` meets the year filter; a hit of unknown year is kept (absence is not evidence)."""
    if filters is None or hit.year is None:
        return True
    if filters.year_from is not None and hit.year < filters.year_from:
        return False
    return not (filters.year_to is not None and hit.year > filters.year_to)


def clean_text(value: Any) -> str:
    """Collapse whitespace (and drop inline markup) in a text field from an API."""
    if value is None:
        return ""
    text = re.sub(r"<[^>]{1,40}>", "", str(value))
    return re.sub(r"\s+", " ", text).strip()


def iso_date(value: Any) -> date | None:
    """An API's `YYYY-MM-DD` date, or None when it is absent or malformed (an unknown date, not an
    unusable record)."""
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


class Source(ABC):
    """An evidence source: `search(query, filters, limit)` and `fetch(source_id)`, both fail-soft."""

    name: ClassVar[str]
    # Every HTTP source sends the query to a third party.
    leaves_process: ClassVar[bool] = True
    # The header that carries `settings.api_key`, for a source whose key is optional.
    key_header: ClassVar[str | None] = None

    def __init__(
        self,
        settings: SourceSettings,
        http: SourceHttp,
        *,
        incidents: Incidents,
        cache: AnswerCache | None = None,
        breakers: CircuitBreakers | None = None,
    ) -> None:
        self.settings = settings
        self.http = http
        self.incidents = incidents
        self.cache = cache
        self.breakers = breakers

    # --- what each source implements -------------------------------------------------------
    @abstractmethod
    async def _search(self, query: str, filters: TaskFilters, limit: int) -> list[SourceHit]:
        """Ask the API; raise `SourceDegraded` (or let a parse error escape) on failure."""

    @abstractmethod
    async def _fetch(self, source_id: str) -> SourceHit | None:
        """Fetch one record by its source-prefixed id; None when the source does not know it."""

    def configuration_problem(self) -> str | None:
        """Why this source cannot be asked at all (`disabled`, `not_configured`), or None."""
        if not self.settings.enabled:
            return "disabled"
        if not self.settings.base_url:
            return "not_configured"
        return None

    def _headers(self) -> dict[str, str]:
        """The request headers: the API key under `key_header` when both are set; none by default."""
        key = self.settings.api_key
        return (
            {self.key_header: key.get_secret_value()} if self.key_header and key is not None else {}
        )

    def facets(self, hits: list[SourceHit]) -> dict[str, dict[str, int]]:
        """Counts a source reports next to its hits (e.g. Cochrane review types); none by default."""
        return {}

    # --- the interface ---------------------------------------------------------------------
    async def search(
        self, query: str, filters: TaskFilters | None = None, limit: int = 10
    ) -> list[SourceHit]:
        """Hits for `query` (empty when the source degraded or the query was refused)."""
        return (await self.lookup(query, filters, limit)).hits

    async def fetch(self, source_id: str) -> SourceHit | None:
        """The record `source_id`, or None (unknown id, or the source degraded)."""
        problem = self.configuration_problem()
        if problem:
            await self._report_configuration(problem, "fetch")
            return None
        key, request = request_key(self.name, "fetch", source_id=source_id)
        cached = await self._recall(key)
        if cached is not None:
            return cached[0] if cached else None
        if not await self._admitted():
            return None
        try:
            hit = await self._fetch(source_id)
        except SourceDegraded as exc:
            await self._settle(exc.reason)
            await self.incidents.degraded(
                self.name, exc.reason, operation="fetch", detail=self.http.redact(exc.detail)
            )
            return None
        except PARSE_ERRORS as exc:
            await self._settle("malformed_payload")
            await self._report_malformed(exc, "fetch")
            return None
        await self._settle(None)
        await self._remember(key, request, [hit] if hit else [])
        return hit

    async def lookup(  # noqa: PLR0911 - each outcome (refused, misconfigured, cached, circuit open, degraded) answers at once
        self, query: str, filters: TaskFilters | None = None, limit: int = 10
    ) -> SourceAnswer:
        """Search with the full outcome: hits, degraded reason, cache use (see module docstring)."""
        filters = filters or TaskFilters()
        kinds = find_identifiers(query)
        if kinds:
            await self.incidents.refused(self.name, kinds)
            return SourceAnswer(self.name, degraded="phi_refused")
        problem = self.configuration_problem()
        if problem:
            await self._report_configuration(problem, "search")
            return SourceAnswer(self.name, degraded=problem)
        key, request = request_key(
            self.name,
            "search",
            query=query,
            limit=limit,
            year_from=filters.year_from,
            year_to=filters.year_to,
            date_from=filters.date_from,
            date_to=filters.date_to,
        )
        cached = await self._recall(key)
        if cached is not None:
            return SourceAnswer(self.name, hits=cached, cached=True, facets=self.facets(cached))
        if not await self._admitted():
            return SourceAnswer(self.name, degraded="circuit_open")
        try:
            found = await self._search(query, filters, limit)
        except SourceDegraded as exc:
            await self._settle(exc.reason)
            await self.incidents.degraded(
                self.name, exc.reason, detail=self.http.redact(exc.detail)
            )
            return SourceAnswer(self.name, degraded=exc.reason)
        except PARSE_ERRORS as exc:
            await self._settle("malformed_payload")
            await self._report_malformed(exc, "search")
            return SourceAnswer(self.name, degraded="malformed_payload")
        await self._settle(None)
        hits = [hit for hit in found if within_years(hit, filters)][:limit]
        await self._remember(key, request, hits)
        return SourceAnswer(self.name, hits=hits, facets=self.facets(hits))

    # --- shared plumbing -------------------------------------------------------------------
    async def _admitted(self) -> bool:
        """False while the source's circuit is open: skipped without a request (see `breaker.py`)."""
        return self.breakers is None or await self.breakers.admit(self.name)

    async def _settle(self, degraded: str | None) -> None:
        if self.breakers is not None:
            await self.breakers.observe(self.name, degraded)

    async def _report_malformed(self, exc: BaseException, operation: str) -> None:
        detail = exc.detail if isinstance(exc, MalformedPayload) else f"{type(exc).__name__}: {exc}"
        await self.incidents.degraded(
            self.name,
            "malformed_payload",
            operation=operation,
            detail=self.http.redact(detail)[:300],
        )

    async def _report_configuration(self, problem: str, operation: str) -> None:
        if problem == "disabled":
            log.info("source disabled", source=self.name, operation=operation)
            return
        await self.incidents.degraded(self.name, problem, operation=operation)

    async def _recall(self, key: str) -> list[SourceHit] | None:
        if self.cache is None:
            return None
        try:
            return await self.cache.recall(key)
        except Exception as exc:  # noqa: BLE001 - a cache outage costs a request, never the answer
            log.warning("cache read failed", source=self.name, error=type(exc).__name__)
            return None

    async def _remember(self, key: str, request: dict[str, Any], hits: list[SourceHit]) -> None:
        if self.cache is None:
            return
        try:
            await self.cache.remember(key, self.name, request, hits)
        except Exception as exc:  # noqa: BLE001 - a cache outage never costs the answer
            log.warning("cache write failed", source=self.name, error=type(exc).__name__)


def json_body(response: Any) -> Any:
    """The JSON of `response`, or `MalformedPayload` when it is not JSON."""
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedPayload(f"not JSON ({type(exc).__name__})") from exc
