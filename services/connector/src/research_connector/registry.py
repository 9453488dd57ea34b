"""Builds every configured evidence source with its HTTP access, token bucket and the shared cache.

`build_sources` is called once in the service lifespan (and by tests with an
`httpx.MockTransport` client and a stubbed clock). PubMed and ClinVar share the `ncbi` budget;
every other source has its own bucket. The API keys of all sources are handed to every
source's redactor, so no key can leak through another source's error text either.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import httpx

from research_connector.breaker import CircuitBreakers
from research_connector.cache import AnswerCache
from research_connector.incidents import Incidents
from research_connector.ratelimit import BucketSource, RateLimits, Sleep
from research_connector.settings import ConnectorSettings
from research_connector.sources.arxiv import ArxivSource
from research_connector.sources.base import Source
from research_connector.sources.clinicaltrials import ClinicalTrialsSource
from research_connector.sources.clinvar import ClinVarSource
from research_connector.sources.cochrane import CochraneSource
from research_connector.sources.crossref import CrossRefSource
from research_connector.sources.drugbank import DrugBankSource
from research_connector.sources.elsevier import ElsevierSource
from research_connector.sources.europepmc import EuropePmcSource
from research_connector.sources.lww import LwwSource
from research_connector.sources.nccn import NccnSource
from research_connector.sources.nejm import NejmSource
from research_connector.sources.openalex import OpenAlexSource
from research_connector.sources.pubmed import PubMedSource
from research_connector.sources.semantic_scholar import SemanticScholarSource
from research_connector.sources.tavily import TavilyNewsSource, TavilySource
from research_connector.sources.unpaywall import UnpaywallSource
from research_connector.sources.wiley import WileySource
from research_connector.transport import SourceHttp
from research_contracts import SourceHit, TaskFilters

SOURCE_TYPES: dict[str, type[Source]] = {
    cls.name: cls
    for cls in (
        PubMedSource,
        ClinVarSource,
        ClinicalTrialsSource,
        EuropePmcSource,
        CrossRefSource,
        OpenAlexSource,
        SemanticScholarSource,
        ArxivSource,
        UnpaywallSource,
        NejmSource,
        LwwSource,
        WileySource,
        ElsevierSource,
        NccnSource,
        CochraneSource,
        DrugBankSource,
        TavilySource,
        TavilyNewsSource,
    )
}

# Sources that spend one shared allowance.
SHARED_BUDGETS = {"pubmed": "ncbi", "clinvar": "ncbi", "tavily_news": "tavily"}
# Sources configured by another source's settings group (one key, one rate): `ConnectorSettings.source_groups`.
SHARED_SETTINGS = {"tavily_news": "tavily"}


class EvidenceSource(Protocol):
    """What the fan-out needs of a source (the HTTP sources and the local `corpus` adapter).

    `leaves_process` is False only for sources that never send the query anywhere (`corpus`):
    the identifier refusal applies to every other source.
    """

    @property
    def name(self) -> str: ...

    @property
    def leaves_process(self) -> bool: ...  # read, never set: a class constant satisfies it

    async def search(
        self, query: str, filters: TaskFilters | None = None, limit: int = 10
    ) -> list[SourceHit]: ...

    async def fetch(self, source_id: str) -> SourceHit | None: ...


class CorpusEvidence:
    """The local hybrid-search corpus seen through the fan-out's interface (no network)."""

    name = "corpus"
    leaves_process = False

    def __init__(self, corpus: Any, *, mode: str = "hybrid") -> None:
        self._corpus = corpus
        self._mode = mode

    async def search(
        self, query: str, filters: TaskFilters | None = None, limit: int = 10
    ) -> list[SourceHit]:
        return list(await self._corpus.search(query, filters, limit, self._mode))

    async def fetch(self, source_id: str) -> SourceHit | None:
        return None  # corpus passages are read through search; ids resolve in research_sources


def build_sources(
    settings: ConnectorSettings,
    *,
    client: httpx.AsyncClient,
    incidents: Incidents,
    cache: AnswerCache | None = None,
    limits: BucketSource | None = None,
    breakers: CircuitBreakers | None = None,
    sleep: Sleep = asyncio.sleep,
) -> dict[str, Source]:
    """Every HTTP source by name (disabled ones included: they answer `disabled`); with `breakers`,
    a source whose circuit is open is skipped without a request."""
    limits = limits or RateLimits()  # per process; main.py passes the fleet-wide SharedRateLimits
    groups = settings.source_groups()
    secrets = [group.api_key for group in groups.values()]
    built: dict[str, Source] = {}
    for name, cls in SOURCE_TYPES.items():
        group = groups[name]
        bucket = limits.bucket(
            SHARED_BUDGETS.get(name, name), group.effective_rate_per_s(), group.burst
        )
        http = SourceHttp(
            name,
            client,
            bucket,
            timeout_s=group.timeout_s,
            max_retries=group.max_retries,
            backoff_base_s=settings.backoff_base_s,
            max_retry_after_s=settings.max_retry_after_s,
            secrets=secrets,
            sleep=sleep,
        )
        built[name] = cls(
            group,
            http,
            incidents=incidents,
            cache=cache if settings.cache_enabled else None,
            breakers=breakers,
        )
    return built


def http_client(settings: ConnectorSettings, **kwargs: Any) -> httpx.AsyncClient:
    """The process-wide HTTP client (connection pooling, our User-Agent, redirects followed)."""
    return httpx.AsyncClient(
        headers={"User-Agent": settings.user_agent}, follow_redirects=True, timeout=30.0, **kwargs
    )
