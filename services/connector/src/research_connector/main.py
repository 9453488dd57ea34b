"""Connector service: answers `research.connector.search` (queue group `connector`) with evidence."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream
from faststream.nats import NatsMessage
from pydantic import ValidationError

from research_connector.sources.corpus import CorpusSource
from research_corpus.embedding import get_embedder
from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_platform.broker import make_broker
from research_platform.db import create_engine, session_factory
from research_platform.logging import get_logger
from research_platform.service import run_service
from research_platform.settings import Settings

SERVICE = "connector"
log = get_logger(__name__)


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    sources: dict[str, CorpusSource] = {}

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        engine = create_engine(settings.require_database_url())
        sources["corpus"] = CorpusSource(session_factory(engine), settings.corpus)
        await asyncio.to_thread(get_embedder().embed_one, "warm up")  # first query pays no model load
        yield
        await engine.dispose()

    @broker.subscriber(subjects.CONNECTOR_SEARCH, queue=subjects.CONNECTOR_QUEUE, title="connector.search")
    async def on_search(msg: NatsMessage) -> EvidenceFound:
        """Fan a `SearchEvidence` request out to the requested sources and merge the hits."""
        try:
            request = SearchEvidence.model_validate_json(msg.body)
        except ValidationError as exc:
            return EvidenceFound(error=f"invalid search request: {exc.errors(include_url=False)}")
        found = EvidenceFound()
        for name in request.sources:
            source = sources.get(name)
            if source is None:
                found.degraded[name] = "unknown or disabled source"
                continue
            try:
                found.hits.extend(await source.search(request.query, request.filters, request.limit, request.mode))
            except Exception as exc:  # fail-soft: one bad source never fails the search
                log.warning("source degraded", source=name, error=repr(exc))
                found.degraded[name] = type(exc).__name__
        return found

    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
