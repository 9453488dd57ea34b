"""The connector's composition root: `bootstrap(settings)` builds what the service needs from its
settings, once, before the app is wired (the embedding model its corpus searches embed queries
with); `main.create_app` wires the bus and the lifespan around it (the database opens in the
lifespan). Libraries get their section from here, never from the environment."""

from __future__ import annotations

from dataclasses import dataclass

from research_connector.settings import ConnectorServiceSettings
from research_corpus.embedding import Embedder, configure_embedder, get_embedder


@dataclass(frozen=True)
class Deps:
    """What the connector is built from."""

    settings: ConnectorServiceSettings
    embedder: Embedder  # the process's (its micro-batching worker and vector cache)


def bootstrap(settings: ConnectorServiceSettings) -> Deps:
    """The connector's dependencies from `settings`; the process-wide models are handed their sections
    here (they load on first use)."""
    configure_embedder(settings.corpus)
    return Deps(settings=settings, embedder=get_embedder())
