"""The correlator's composition root: `bootstrap(settings)` builds what the service needs from its
settings, once, before the app is wired (the LLM policy its findings are asked of and the models
the offline engine loads); `main.create_app` wires the bus and the lifespan around it (the
database opens in the lifespan). Libraries get their section from here, never from the
environment."""

from __future__ import annotations

from dataclasses import dataclass

from research_corpus.embedding import Embedder, configure_embedder, get_embedder
from research_correlator.settings import CorrelatorServiceSettings
from research_judgement import configure_judgement
from research_llm import LlmPolicy


@dataclass(frozen=True)
class Deps:
    """What the correlator is built from."""

    settings: CorrelatorServiceSettings
    llm: LlmPolicy  # which engines, in which order, with what budget
    embedder: Embedder  # the process's (its micro-batching worker and vector cache)


def bootstrap(settings: CorrelatorServiceSettings) -> Deps:
    """The correlator's dependencies from `settings`; the process-wide models are handed their sections
    here (they load on first use)."""
    configure_embedder(settings.corpus)
    configure_judgement(settings.judgement)
    return Deps(settings=settings, llm=LlmPolicy(settings.llm), embedder=get_embedder())
