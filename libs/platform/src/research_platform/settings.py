"""Settings shared by every process, read from the environment (and `.env`).

One convention for every service: a process reads ONE root `BaseSettings` — this `Settings`,
or a service's subclass of it that adds the service's own group (`CorrelatorServiceSettings`
adds `correlator`, `ConnectorServiceSettings` adds `connector`, …). Groups are plain pydantic
models nested in the root; an environment variable names the group, then the field, joined by
a double underscore, with no other prefix: `LLM__PROVIDER=openai`, `CRITIC__SLA_SECONDS=30`,
`CORRELATOR__SCHEDULE__INTERVAL_S=3600`, `CONNECTOR__PUBMED__API_KEY=…`. Top-level fields
(`NATS_URL`, `DATABASE_URL`, `LOG_LEVEL`, `GATEWAY_PORT`, …) belong to every process. Secrets are
`SecretStr` and are never logged.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

# The bounds settings share live in their types, so a field states only its default and meaning
# (and a group that changes a default, `llm_timeout_s: PositiveFloat = 30.0`, keeps the bound):
# pydantic's `PositiveFloat` (a duration, a rate), `PositiveInt` (a count of at least one),
# `NonNegativeInt` (a count where 0 means none, or all), and `Share` below.
Share = Annotated[float, Field(ge=0.0, le=1.0)]
"""A fraction or a calibrated probability, from 0 to 1."""


class SettingsGroup(BaseModel):
    """A group of settings nested in a root (`LLM__…`, `REVIEWER__…`): a field's meaning is the
    docstring under it (pydantic's `use_attribute_docstrings`), which docs/configuration.md prints."""

    model_config = ConfigDict(use_attribute_docstrings=True)


class LLMSettings(SettingsGroup):
    """Which model answers: `auto` (default), `openai`, `gemini`, or `offline` (no network).

    `auto` builds the chain OpenAI → Gemini → offline from whichever keys are present.
    """

    provider: str = "auto"
    """`auto` (OpenAI → Gemini → offline from the keys present), `openai`, `gemini` or `offline`."""
    openai_api_key: SecretStr | None = None
    """Key of the OpenAI-compatible server."""
    openai_base_url: str = "https://api.openai.com/v1"
    """Any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp; docs/local-models.md)."""
    openai_model: str = "gpt-4o"
    """Model asked of that server."""
    gemini_api_key: SecretStr | None = None
    """Key of the Gemini API."""
    gemini_base_url: str | None = None
    """Another Gemini endpoint; unset = Google's."""
    gemini_model: str = "gemini-2.0-flash"
    """Gemini model asked."""
    timeout_s: float = 30.0
    """Longest wait for one answer of one provider (a corrective retry is a second call)."""
    # What research_llm needs to survive real servers (docs/local-models.md): a bounded answer, a
    # prompt that fits the context, one request at a time to a local server, a budget per run.
    max_output_tokens: int = Field(default=1024, ge=16)
    """`max_tokens` of every answer (at most a third of the context)."""
    context_tokens: int | None = Field(default=None, ge=256)
    """The model's context in tokens; None = ask the server (llama.cpp `/props`, vLLM
    `/v1/models`), else unbounded."""
    chars_per_token: PositiveFloat = 3.0
    """Prompt size estimate used to trim evidence to the context (conservative)."""
    concurrency: PositiveInt = 4
    """Requests in flight per provider (1 for a local server)."""
    run_budget_s: float | None = Field(default=None, gt=0)
    """Seconds of model time one run may spend; then offline."""
    run_budget_tokens: int | None = Field(default=None, gt=0)
    """Tokens (in + out) one run may spend; then offline."""
    run_budget_usd: float | None = Field(default=None, gt=0)
    """Estimated USD (price table) one run may spend; then offline."""
    schema_lengths: str = "auto"
    """Send string minLength/maxLength in the JSON schema: `on`, `off`, or `auto` (off for
    api.openai.com, whose strict mode rejects them)."""
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=lambda: {
            "gpt-4o": (2.50, 10.00),
            "gpt-4o-mini": (0.15, 0.60),
            "gemini-2.0-flash": (0.10, 0.40),
        }
    )
    """USD per million (input, output) tokens by model name; a model not listed
    (a local one) costs 0."""


class CorpusSettings(SettingsGroup):
    """Hybrid retrieval knobs (reciprocal rank fusion over lexical BM25 + dense cosine kNN)."""

    # Defaults tuned on the SciFact TRAIN split (bench/retrieval.py --tune; rrf_k and dense_weight
    # re-chosen with the query adapter on by bench/retrieval_adapter.py's 5-fold CV); never on test.
    rrf_k: int = 2
    """Reciprocal rank fusion constant."""
    lexical_weight: float = 1.0
    """Weight of the BM25 ranking in the fusion."""
    dense_weight: float = 1.5
    """Weight of the embedding ranking in the fusion."""
    title_weight: float = 1.0
    """BM25 term-frequency weight of a title occurrence (text = 1)."""
    bm25_k1: float = 0.9
    """BM25 term-frequency saturation."""
    bm25_b: float = 0.4
    """BM25 document-length normalisation."""
    candidates: int = 100
    """Papers taken from each ranking before fusion."""
    lexical_depth: NonNegativeInt = 1000
    """Postings of highest impact BM25 reads per query lexeme in an unfiltered search (0 = all);
    bounds a query's cost whatever the corpus's size. Chosen on SciFact train
    (docs/benchmarks.md#benchretrieval)."""
    chunk_words: int = 180
    """Largest chunk, in words, when papers are ingested."""
    embed_batch_size: int = 32
    """Texts per embedding model call."""
    sentence_vectors: Literal["lazy", "ingest"] = "lazy"
    """When a corpus sentence gets its stored vector (`corpus_sentences`, read by the offline
    engine): `lazy` — the first request that reads the paper embeds its sentences and stores them
    (the ingest embeds chunks only, ~6x fewer texts); `ingest` — every sentence at ingest."""
    query_adapter: bool = True
    """Pass dense query vectors through the trained query adapter."""
    model_path: str | None = None
    """Override of the bundled MiniLM model folder."""
    embed_backend: Literal["onnx", "torch"] = "onnx"
    """Runtime of the embedding model: `onnx` (ONNX Runtime; torch is used when onnxruntime is not
    installed) or `torch` (sentence-transformers, the reference)."""
    embed_precision: Literal["int8", "fp32"] = "fp32"
    """Precision of the embedding model: `fp32` or `int8` (ONNX graph dynamically quantised on this
    machine from the fp32 export; needs the onnx backend; ~1.6x faster ingest, SciFact test hybrid
    nDCG@10 0.009 lower, docs/performance.md). The corpus records the precision its vectors were
    made with; after changing it run `research-engine corpus reembed`."""
    embed_threads: int | None = Field(default=None, ge=1)
    """Math threads of the embedding model; None = OMP_NUM_THREADS if set, else the cores
    this process may use."""
    onnx_cache_dir: str | None = None
    """Where the ONNX export of the model is kept (keyed by the weights' hash); None =
    ~/.cache/research-engine/onnx."""
    index_build_memory_mb: int = Field(default=256, ge=64)
    """PostgreSQL `maintenance_work_mem` (MiB) while a bulk load builds its indexes: HNSW builds
    fastest when its graph fits (about 1.1 KB a chunk, ~1.8 GB for a million papers)."""
    ingest_worker_batch: PositiveInt = 128
    """Papers an ingest worker (`research-engine corpus worker`) takes from the job queue at once
    (one model call, one transaction)."""
    ingest_ack_wait_s: PositiveFloat = 60.0
    """How long a job held by an ingest worker that stopped answering (killed) waits before another
    worker gets it; live workers extend it while they embed."""
    ingest_max_deliver: PositiveInt = 10
    """Deliveries of one ingest job before the workers give up on it (it stays
    queued, unacknowledged)."""


class JudgementSettings(BaseModel):
    """What the judgement models load (`research_judgement`): built by `Settings.judgement` from
    the flat variables `JUDGEMENT_WEIGHTS`, `JUDGEMENT_BACKEND`, `JUDGEMENT_ABSTRACT_WEIGHTS` and
    the machine's conventions (`OMP_NUM_THREADS`, `XDG_CACHE_HOME`)."""

    weights: str | None = None  # None = the shipped `research_judgement/weights`
    backend: Literal["torch", "onnx"] = "torch"
    abstract_weights: str | None = None  # None = the shipped `weights/abstract`
    threads: int | None = None  # math threads of the ONNX runtime; None = the usable cores
    onnx_cache_dir: str | None = (
        None  # where ONNX exports are kept; None = ~/.cache/research-engine/onnx
    )


class CorpusAgentSettings(SettingsGroup):
    """What the services that work a run with the corpus tools and, where one is configured, an
    LLM have in common (the reviewer and the verifier subclass it for their `REVIEWER__…` and
    `VERIFIER__…` groups)."""

    concurrency: PositiveInt = 2
    """Runs fetched and worked on at once."""
    tool_timeout_s: PositiveFloat = 20.0
    """Longest wait for one corpus tool answer."""
    llm_timeout_s: PositiveFloat = 60.0
    """Longest wait for one LLM step (LLM engine only)."""


class GatewayAuthSettings(SettingsGroup):
    """API-key checks of the gateway (`GATEWAY_AUTH__OPEN`, `GATEWAY_AUTH__FAILED_ATTEMPTS`, …).

    Keys are required on every API route unless an operator turns `open` on; the gateway refuses
    to start open on a non-loopback bind and logs a warning when it starts open.
    """

    open: bool = False
    """Answer API routes without a key (loopback binds only)."""
    failed_attempts: PositiveInt = 20
    """Failed key checks a client may make per window."""
    failed_window_s: PositiveFloat = 60.0
    """The window of `failed_attempts`, in seconds."""
    trusted_proxies: list[str] = Field(default_factory=list)
    """Addresses or networks (CIDR) of reverse proxies in front of the gateway; a request from one
    of them is taken to come from its `X-Forwarded-For` client over its `X-Forwarded-Proto` scheme
    (the failed-key throttle counts that client; the console cookie is `Secure` over https)."""
    console_code_ttl_s: float = Field(default=300.0, gt=0, le=3600)
    """How long the single-use sign-in code `research-engine up` prints stays valid."""
    console_session_ttl_s: PositiveFloat = 12 * 3600.0
    """How long a console sign-in lasts."""


class GatewayLimitsSettings(SettingsGroup):
    """What one researcher key may ask of the engine (`GATEWAY_LIMITS__…`); admin keys are exempt,
    and an admin may set another value per key (`PUT /keys/{key_id}/limits`)."""

    runs_in_flight: NonNegativeInt = 5
    """Runs of one kind (reviews, verifications, source lists, tasks, PDF exports) a key may have in
    flight; a slot frees when its run completes, fails or times out."""
    submissions_per_hour: NonNegativeInt = 120
    """Expensive submissions (all kinds) a key may make per hour."""
    watched_claims: NonNegativeInt = 500
    """Watched claims (`watch: true` verifications) a key may hold."""
    run_timeout_s: PositiveFloat = 3600.0
    """After this long a run still in flight no longer holds its key's slot."""
    busy_retry_after_s: PositiveInt = 30
    """`Retry-After` of a 429 for a key with every run slot taken."""
    declared_workspaces_only: bool = False
    """A source list naming a workspace with no limits row is a 404; unset = it gets the
    `default` workspace's limits."""


class Settings(BaseSettings):
    """Process settings every service shares; a service with its own group subclasses this root."""

    model_config = SettingsConfigDict(
        env_nested_delimiter="__", extra="ignore", env_file=".env", use_attribute_docstrings=True
    )

    nats_url: str | None = None
    """External NATS with JetStream, several seeds comma-separated
    (`nats://a:4222,nats://b:4222`); unset = embedded."""
    nats_stream_replicas: int | None = Field(default=None, ge=1, le=5)
    """Replicas of every stream; unset = 3 on a cluster, else 1."""
    database_url: str | None = None
    """External PostgreSQL with pgvector (`postgresql://…` or
    `postgresql+asyncpg://…`); unset = embedded."""
    database_read_url: str | None = None
    """Read replica for read-only queries (gateway reads, search, recall); unset = primary."""
    data_dir: Path = Path(".research-engine")
    """Embedded servers' data folder (`--data-dir` on the CLI)."""
    research_engine_migrations: str | None = None
    """Folder of the Alembic migrations; unset = `migrations/` of the checkout the packages are
    installed from (the container image sets /app/migrations)."""
    gateway_host: str = "127.0.0.1"
    """Address the gateway binds."""
    gateway_port: int = 8080
    """Port the gateway binds."""
    gateway_allowed_hosts: list[str] = Field(default_factory=list)
    """Host names the gateway answers besides loopback and GATEWAY_HOST (its public name
    behind a proxy, e.g. research.example.org); any other Host is refused (421), as is a
    foreign Origin (403)."""
    log_level: str = "INFO"
    """Least severe log level written."""
    log_json: bool | None = None
    """Log lines as JSON; unset = JSON unless stderr is a terminal."""
    # The metrics endpoint of a worker process (research_platform.service; the gateway's too).
    metrics_port: int | None = None
    """Port of the process's Prometheus endpoint; unset = none."""
    metrics_host: str = "0.0.0.0"  # noqa: S104 - Prometheus scrapes from another host; the stack sets loopback
    """Address the Prometheus endpoint binds."""
    metrics_lag_interval_s: PositiveFloat = 15.0
    """How often the consumer-lag gauge asks JetStream."""
    ack_wait_s: float = 60.0
    """Seconds a consumer has to ack a message before redelivery."""
    max_deliver: int = 5
    """Deliveries of one message before it is dead-lettered."""
    # Conventions of the machine, read here and not from the raw environment (research_corpus).
    omp_num_threads: str | None = None
    """OpenMP's thread count as the math libraries read it (the stack gives each service 1); a
    positive number is also the embedding model's default thread count."""
    xdg_cache_home: str | None = None
    """The user's cache folder (XDG); the ONNX exports are kept in its `research-engine/onnx` (else
    in ~/.cache) unless CORPUS__ONNX_CACHE_DIR."""
    # The judgement models (research_judgement): flat names, as the library has always read them.
    judgement_weights: str | None = None
    """Folder of other judgement models (relevance, evidence, stance); unset = the shipped
    `research_judgement/weights`."""
    judgement_backend: Literal["torch", "onnx"] = "torch"
    """Runtime of the judgement cross-encoders: `torch`, or `onnx` (ONNX Runtime, same
    probabilities within 1e-3)."""
    judgement_abstract_weights: str | None = None
    """Folder of another abstract-level model (`scripts/train_abstract.py --out`); unset = the
    shipped `weights/abstract`."""
    llm: LLMSettings = Field(default_factory=LLMSettings)
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    gateway_auth: GatewayAuthSettings = Field(default_factory=GatewayAuthSettings)
    gateway_limits: GatewayLimitsSettings = Field(default_factory=GatewayLimitsSettings)
    installation_secret: SecretStr | None = None
    """The installation's secret keying audit digests and idempotency-derived task ids (HMAC); every
    process must share it. Unset = read from `installation_secret_file`."""
    installation_secret_file: Path | None = None
    """File holding the installation secret; unset = `<data_dir>/installation.key` (created, mode
    0600, at first start)."""
    dead_letter_max_age_days: PositiveFloat = 30.0
    """How long the dead-letter stream keeps parked message bytes."""

    @model_validator(mode="after")
    def _machine_conventions(self) -> Settings:
        """The machine's conventions resolved once, here, into the sections that use them: a
        positive `OMP_NUM_THREADS` is the embedding model's thread count unless
        `CORPUS__EMBED_THREADS` is set, and `XDG_CACHE_HOME` places the ONNX exports unless
        `CORPUS__ONNX_CACHE_DIR` does (libraries read their section, never the environment)."""
        updates: dict[str, object] = {}
        if self.corpus.embed_threads is None and self.machine_threads is not None:
            updates["embed_threads"] = self.machine_threads
        if self.corpus.onnx_cache_dir is None and self.xdg_onnx_cache_dir is not None:
            updates["onnx_cache_dir"] = self.xdg_onnx_cache_dir
        if updates:
            self.corpus = self.corpus.model_copy(update=updates)
        return self

    @property
    def machine_threads(self) -> int | None:
        """`OMP_NUM_THREADS` when it is a positive number, else None (= the usable cores)."""
        configured = (self.omp_num_threads or "").strip()
        return int(configured) if configured.isdigit() and int(configured) > 0 else None

    @property
    def xdg_onnx_cache_dir(self) -> str | None:
        """`$XDG_CACHE_HOME/research-engine/onnx` when `XDG_CACHE_HOME` is set, else None."""
        if not self.xdg_cache_home:
            return None
        return str(Path(self.xdg_cache_home) / "research-engine" / "onnx")

    @property
    def judgement(self) -> JudgementSettings:
        """The judgement models' section, from the flat `JUDGEMENT_*` variables (their names kept)."""
        return JudgementSettings(
            weights=self.judgement_weights,
            backend=self.judgement_backend,
            abstract_weights=self.judgement_abstract_weights,
            threads=self.machine_threads,
            onnx_cache_dir=self.xdg_onnx_cache_dir,
        )

    @field_validator("metrics_port", "judgement_backend", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object, info: ValidationInfo) -> object:
        """An empty variable (`METRICS_PORT=`) has always meant unset: the field's default."""
        if value == "" and info.field_name is not None:
            return cls.model_fields[info.field_name].default
        return value

    def require_nats_url(self) -> str:
        return _required(self.nats_url, "NATS_URL")

    def require_database_url(self) -> str:
        return _required(self.database_url, "DATABASE_URL")


def _required(value: str | None, variable: str) -> str:
    """A server address a process cannot start without (the CLI sets it for the services)."""
    if not value:
        raise RuntimeError(
            f"{variable} is not set: start the stack with `research-engine up` or set {variable}"
        )
    return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once: for entry points (the CLI, benchmarks) only;
    libraries take their section as an argument (a test holds `libs/` to that)."""
    return Settings()
