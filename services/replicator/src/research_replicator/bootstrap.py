"""The replicator's composition root: `bootstrap(settings)` builds what the service needs from its
settings, once, before the app is wired (the judgement models its stance checks load);
`main.create_app` wires the bus and the lifespan around it (the database opens in the lifespan).
Libraries get their section from here, never from the environment."""

from __future__ import annotations

from dataclasses import dataclass

from research_judgement import configure_judgement
from research_replicator.settings import ReplicatorServiceSettings


@dataclass(frozen=True)
class Deps:
    """What the replicator is built from."""

    settings: ReplicatorServiceSettings


def bootstrap(settings: ReplicatorServiceSettings) -> Deps:
    """The replicator's dependencies from `settings`; the process-wide models are handed their sections
    here (they load on first use)."""
    configure_judgement(settings.judgement)
    return Deps(settings=settings)
