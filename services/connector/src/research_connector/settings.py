"""Connector settings: the `connector` group of the process settings (see research_platform.settings),
one sub-group per evidence source, read from `CONNECTOR__<SOURCE>__<FIELD>`.

Examples: `CONNECTOR__PUBMED__API_KEY=...`, `CONNECTOR__CROSSREF__MAILTO=team@example.org`,
`CONNECTOR__ELSEVIER__API_KEY=...`, `CONNECTOR__DRUGBANK__ENABLED=true`,
`CONNECTOR__CACHE_TTL_S=86400`. Keys are `SecretStr`: they print as `**********` and are only
unwrapped at the moment a request header or parameter is built.

Rates are requests per second at the documented limit of each API (see `DOCUMENTED_RATES`);
`burst` is how many requests may go out back to back after a quiet spell.
"""

from __future__ import annotations

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SecretStr,
)

from research_platform.settings import Settings, SettingsGroup


class SourceSettings(SettingsGroup):
    """Where a source lives, how fast it may be called and with which key."""

    enabled: bool = True
    """Whether the source is searched at all."""
    base_url: str = ""
    """The API's base URL."""
    api_key: SecretStr | None = None
    """The API key (a secret)."""
    rate_per_s: PositiveFloat = 1.0
    """Requests per second (documented)."""
    burst: PositiveInt = 1
    """Requests sent back to back after a quiet spell."""
    timeout_s: PositiveFloat = 10.0
    """Longest wait for one request."""
    max_retries: NonNegativeInt = 2
    """Retries after a 429 / 5xx / transport error."""

    def effective_rate_per_s(self) -> float:
        """The documented rate, raised where a key or a contact address unlocks a higher one."""
        return self.rate_per_s


class PubMedSettings(SourceSettings):
    """NCBI E-utilities: 3 requests/s without a key, 10 with one (same budget for ClinVar)."""

    base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    rate_per_s: PositiveFloat = 3.0
    rate_with_key_per_s: float = 10.0
    """Requests per second when `api_key` is set."""
    tool: str = "research-engine"
    """`tool` parameter NCBI asks for."""
    email: str | None = None
    """Contact address NCBI asks for."""
    detail: str = "abstract"
    """`abstract` (efetch XML) or `summary` (esummary JSON)."""

    def effective_rate_per_s(self) -> float:
        return self.rate_with_key_per_s if self.api_key is not None else self.rate_per_s


class ClinVarSettings(PubMedSettings):
    """ClinVar through the same E-utilities (and the same per-key budget as PubMed)."""


class CrossRefSettings(SourceSettings):
    """CrossRef REST: polite pool (with `mailto`) 10 requests/s, public pool 5 requests/s."""

    base_url: str = "https://api.crossref.org"
    rate_per_s: PositiveFloat = 5.0
    polite_rate_per_s: float = 10.0
    """Requests per second in the polite pool (with `mailto`)."""
    mailto: str | None = None
    """Contact address: joins the polite pool."""

    def effective_rate_per_s(self) -> float:
        return self.polite_rate_per_s if self.mailto else self.rate_per_s


class MailtoSettings(SourceSettings):
    """APIs that ask for a contact address (OpenAlex polite pool, Unpaywall's required email)."""

    mailto: str | None = None
    """Contact address sent with requests."""


# Where a publisher's record keeps each SourceHit field, unless its group says otherwise.
RECORD_FIELDS: dict[str, str] = {
    "id": "id",
    "title": "title",
    "authors": "authors",
    "year": "year",
    "date": "date",
    "doi": "doi",
    "url": "url",
    "abstract": "abstract",
    "venue": "journal",
}


class PublisherSettings(SourceSettings):
    """A licensed publisher search API reached with a bearer key (5 requests/s).

    Where the publisher documents no public search API, the endpoint and the mapping from its
    JSON to `SourceHit` are settings: `results_path` is a dotted path to the list of records,
    `fields` maps SourceHit fields (`id`, `title`, `authors`, `year`, `date`, `doi`, `url`,
    `abstract`, `venue`, and any extra metadata key) to dotted paths inside one record.
    """

    rate_per_s: PositiveFloat = 5.0
    burst: PositiveInt = 5
    search_path: str = "/search"
    """Path of the search endpoint."""
    fetch_path: str = "/articles/{id}"
    """Path of one record (`{id}` replaced)."""
    query_param: str = "q"
    """Query parameter of the search."""
    limit_param: str = "limit"
    """Result-count parameter."""
    journal_param: str = "journal"
    """Journal filter parameter."""
    journals: list[str] = Field(default_factory=list)
    """Journals searched (one filter value each)."""
    auth_header: str = "Authorization"
    """Header carrying the key."""
    auth_scheme: str = "Bearer"
    """Word before the key in that header (empty = none)."""
    results_path: str = "results"
    """Dotted path to the list of records in the answer."""
    id_prefix: str = ""
    """Prefix of the source's record ids."""
    fields: dict[str, str] = Field(default_factory=lambda: dict(RECORD_FIELDS))
    """SourceHit field → dotted path inside one record."""


class TavilySettings(SourceSettings):
    """Tavily web search (general and news topics share it): key-gated, 100 requests/min (dev key)."""

    base_url: str = "https://api.tavily.com"
    rate_per_s: PositiveFloat = 100 / 60
    burst: PositiveInt = 5
    search_depth: str = "basic"
    """basic (1 credit) or advanced (2 credits)."""


def _publisher(**overrides: object) -> PublisherSettings:
    return PublisherSettings.model_validate(overrides)


class CircuitSettings(SettingsGroup):
    """The per-source circuit breaker (`CONNECTOR__CIRCUIT__THRESHOLD`, …; see `breaker.py`)."""

    enabled: bool = True
    """Whether failing sources are skipped."""
    threshold: PositiveInt = 3
    """Consecutive failures that open a source's circuit."""
    cooldown_s: PositiveFloat = 30.0
    """How long an open circuit skips the source before one probe."""
    refresh_s: NonNegativeFloat = 1.0
    """Longest a replica trusts its copy of the shared state."""


class ConnectorSettings(SettingsGroup):
    """Every evidence source of the connector service, plus the cache and fan-out knobs."""

    circuit: CircuitSettings = Field(default_factory=CircuitSettings)
    cache_ttl_s: PositiveFloat = 24 * 3600
    """How long a source answer is reused."""
    cache_enabled: bool = True
    """Reuse source answers at all."""
    max_retry_after_s: float = 30.0
    """Longest Retry-After the connector waits."""
    backoff_base_s: float = 0.5
    """Back-off before the first retry, doubled per retry (unless Retry-After says)."""
    user_agent: str = "research-engine/0.1 (+https://github.com/research-engine)"
    """User-Agent header of every request."""

    pubmed: PubMedSettings = Field(default_factory=PubMedSettings)
    clinvar: ClinVarSettings = Field(default_factory=ClinVarSettings)
    clinicaltrials: SourceSettings = Field(
        # ClinicalTrials.gov API v2 documents ~50 requests per minute per IP.
        default_factory=lambda: SourceSettings(
            base_url="https://clinicaltrials.gov/api/v2", rate_per_s=50 / 60
        )
    )
    europepmc: SourceSettings = Field(
        default_factory=lambda: SourceSettings(
            base_url="https://www.ebi.ac.uk/europepmc/webservices/rest", rate_per_s=10.0, burst=2
        )
    )
    crossref: CrossRefSettings = Field(default_factory=CrossRefSettings)
    openalex: MailtoSettings = Field(
        default_factory=lambda: MailtoSettings(
            base_url="https://api.openalex.org", rate_per_s=10.0, burst=2
        )
    )
    semantic_scholar: SourceSettings = Field(
        # 1 request/s for an API key; the keyless pool is shared and throttled harder.
        default_factory=lambda: SourceSettings(
            base_url="https://api.semanticscholar.org/graph/v1", rate_per_s=1.0
        )
    )
    arxiv: SourceSettings = Field(
        # arXiv API terms: no more than one request every three seconds.
        default_factory=lambda: SourceSettings(
            base_url="https://export.arxiv.org/api", rate_per_s=1 / 3
        )
    )
    unpaywall: MailtoSettings = Field(
        default_factory=lambda: MailtoSettings(
            base_url="https://api.unpaywall.org/v2", rate_per_s=10.0
        )
    )
    tavily: TavilySettings = Field(default_factory=TavilySettings)
    elsevier: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            base_url="https://api.elsevier.com/content",
            search_path="/search/sciencedirect",
            journals=["The Spine Journal", "Acta Biomaterialia", "The Journal of Arthroplasty"],
            auth_header="X-ELS-APIKey",
            auth_scheme="",
        )
    )
    nejm: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            journals=["The New England Journal of Medicine"], id_prefix="doi:"
        )
    )
    lww: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            journals=[
                "JAMA",
                "The Journal of Bone and Joint Surgery",
                "Clinical Orthopaedics and Related Research",
            ],
            id_prefix="doi:",
        )
    )
    wiley: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            journals=[
                "Journal of Orthopaedic Research",
                "Journal of Biomedical Materials Research Part B",
            ],
            id_prefix="doi:",
        )
    )
    nccn: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            search_path="/guidelines",
            fetch_path="/guidelines/{id}",
            id_prefix="nccn:",
            fields={
                "id": "id",
                "title": "title",
                "year": "year",
                "date": "version_date",
                "url": "url",
                "abstract": "summary",
                "version": "version",
                "category": "category",
            },
        )
    )
    cochrane: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            id_prefix="doi:",
            fields={**RECORD_FIELDS, "id": "doi", "review_type": "review_type"},
        )
    )
    drugbank: PublisherSettings = Field(
        default_factory=lambda: _publisher(
            # Present but disabled: the DrugBank licence is pending.
            enabled=False,
            base_url="https://api.drugbank.com/v1",
            search_path="/drugs",
            fetch_path="/drugs/{id}",
            auth_scheme="",
            results_path="",
            id_prefix="drugbank:",
            fields={"id": "drugbank_id", "title": "name", "abstract": "description"},
        )
    )

    # Documented request rates (requests per second) the defaults above encode, for the README.

    def source_groups(self) -> dict[str, SourceSettings]:
        """Each source's settings group by source name (`tavily_news` spends `tavily`'s key and rate)."""
        return {
            "pubmed": self.pubmed,
            "clinvar": self.clinvar,
            "clinicaltrials": self.clinicaltrials,
            "europepmc": self.europepmc,
            "crossref": self.crossref,
            "openalex": self.openalex,
            "semantic_scholar": self.semantic_scholar,
            "arxiv": self.arxiv,
            "unpaywall": self.unpaywall,
            "nejm": self.nejm,
            "lww": self.lww,
            "wiley": self.wiley,
            "elsevier": self.elsevier,
            "nccn": self.nccn,
            "cochrane": self.cochrane,
            "drugbank": self.drugbank,
            "tavily": self.tavily,
            "tavily_news": self.tavily,
        }


DOCUMENTED_RATES: dict[str, str] = {
    "pubmed": "3/s without key, 10/s with key (NCBI E-utilities)",
    "clinvar": "shares the NCBI E-utilities budget with pubmed",
    "clinicaltrials": "~50/min per IP (ClinicalTrials.gov API v2)",
    "europepmc": "no hard limit published; 10/s",
    "crossref": "5/s public pool, 10/s polite pool with mailto",
    "openalex": "10/s (100k/day)",
    "semantic_scholar": "1/s with an API key",
    "arxiv": "1 request per 3 s",
    "unpaywall": "100k/day; 10/s",
    "tavily": "100/min with a development key (tavily and tavily_news share it)",
    "publishers": "5/s (nejm, lww, wiley, elsevier, nccn, cochrane, drugbank)",
}


class ConnectorServiceSettings(Settings):
    """The connector process: the shared settings plus the `connector` group (`CONNECTOR__…`)."""

    connector: ConnectorSettings = Field(default_factory=ConnectorSettings)
