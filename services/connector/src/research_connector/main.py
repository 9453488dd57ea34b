"""Connector service: answers `research.connector.search` (queue group `connector`) with evidence.

`research.connector.search` fans a `SearchEvidence` out to the requested sources concurrently
(per-source deadline, merged, de-duplicated; see `fanout.py`); `research.connector.source.<name>`
asks one source directly; `research.connector.corpus.<tool>` answers the corpus tools
(`corpus_tools.py`). All subscribe in the `connector` queue group, so replicas share the
load. Sources, keys and rates come from `CONNECTOR__…` settings (`settings.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from faststream import FastStream

from research_connector import corpus_tools
from research_connector.bootstrap import bootstrap
from research_connector.breaker import CircuitBreakers, open_circuit_bucket
from research_connector.cache import AnswerCache
from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.registry import (
    SOURCE_TYPES,
    CorpusEvidence,
    EvidenceSource,
    build_sources,
    http_client,
)
from research_connector.settings import ConnectorServiceSettings
from research_connector.shared_ratelimit import SharedRateLimits, open_rate_bucket
from research_connector.sources.corpus import CorpusSource
from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_corpus.embedding.batching import MicroBatchingEmbedder
from research_ledger import Ledger
from research_platform.app import Pool, ServiceContext, service_app
from research_platform.db import session_factory
from research_platform.logging import get_logger
from research_platform.nats_seeds import connect
from research_platform.replies import refusing
from research_platform.service import run_service

SERVICE = "connector"
log = get_logger(__name__)
SEARCH_WORKERS = 16  # searches answered at once (as many as a researcher works on)


def create_app(settings: ConnectorServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    connector = settings.connector
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def build(ctx: ServiceContext[ConnectorServiceSettings, None]) -> AsyncIterator[None]:
        sessions = ctx.sessions
        state["sessions"], state["read_sessions"] = sessions, session_factory(ctx.reader)
        client = http_client(connector)
        # Rate limits are counted fleet-wide (NATS KV), so replicas together keep each source's rate.
        limits_nc = await connect(settings.require_nats_url())
        limits = SharedRateLimits(await open_rate_bucket(limits_nc, settings.nats_stream_replicas))
        state["corpus"] = CorpusSource(state["read_sessions"], settings.corpus)
        state["incidents"] = Incidents(Ledger(sessions))
        # Circuits are shared the same way: a source one replica found down is skipped by all.
        circuit = connector.circuit
        breakers = (
            CircuitBreakers(
                await open_circuit_bucket(limits_nc, replicas=settings.nats_stream_replicas),
                threshold=circuit.threshold,
                cooldown_s=circuit.cooldown_s,
                refresh_s=circuit.refresh_s,
                on_transition=state["incidents"].circuit_changed,
            )
            if circuit.enabled
            else None
        )
        state["sources"] = build_sources(
            connector,
            client=client,
            incidents=state["incidents"],
            cache=AnswerCache(sessions, ttl_s=connector.cache_ttl_s),
            limits=limits,
            breakers=breakers,
        )
        await asyncio.to_thread(
            deps.embedder.embed_one, "warm up"
        )  # first query pays no model load
        yield
        await client.aclose()
        await limits_nc.close()

    # No JetStream consumer (every subject is request/reply), no stream of its own: no `Delivery`,
    # no stream set-up. Search only reads: the reader (`DATABASE_READ_URL`, else the primary).
    app, ctx = service_app(
        settings,
        SERVICE,
        build,
        pool=Pool(size=SEARCH_WORKERS + 2, reader=True),
        streams=False,
    )

    async def answer(request: SearchEvidence, only: str | None = None) -> EvidenceFound:
        if request.query_embedding is not None:  # the asker embedded the query already: never twice
            embedder = deps.embedder
            if isinstance(embedder, MicroBatchingEmbedder):
                embedder.remember(request.query, request.query_embedding)
        registry: dict[str, EvidenceSource] = {
            **state["sources"],
            "corpus": CorpusEvidence(state["corpus"], mode=request.mode),
        }
        return await search_all(
            [only] if only else request.sources,
            request.query,
            request.filters,
            request.limit,
            request.deadline_s,
            registry=registry,
            incidents=state["incidents"],
        )

    # A request that does not validate is answered with `error`, never left to time out.
    searches = refusing(
        lambda exc: EvidenceFound(error=f"invalid search request: {exc.errors(include_url=False)}")
    )

    # Searches are answered concurrently (one at a time made every researcher task queue behind
    # the others' corpus queries).
    @searches.subscriber(
        subjects.CONNECTOR_SEARCH,
        queue=subjects.CONNECTOR_QUEUE,
        title="connector.search",
        max_workers=SEARCH_WORKERS,
    )
    async def on_search(request: SearchEvidence) -> EvidenceFound:
        """Fan a `SearchEvidence` request out to the requested sources and merge the hits."""
        return await answer(request)

    def direct(name: str) -> Callable[[SearchEvidence], Awaitable[EvidenceFound]]:
        async def on_source_search(request: SearchEvidence) -> EvidenceFound:
            """Ask one source directly (its `sources` field is ignored)."""
            return await answer(request, only=name)

        return on_source_search

    for name in ("corpus", *SOURCE_TYPES):
        searches.subscriber(
            subjects.connector_source_subject(name),
            queue=subjects.CONNECTOR_QUEUE,
            title=f"connector.source.{name}",
        )(direct(name))

    ctx.broker.include_router(searches)
    corpus_tools.subscribe(
        ctx.broker, corpus_tools.CorpusTools(lambda: state["read_sessions"], settings.corpus)
    )
    return app


def run() -> None:
    run_service(SERVICE, create_app, ConnectorServiceSettings)


if __name__ == "__main__":
    run()
