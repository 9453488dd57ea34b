"""The reviewer's composition root: `bootstrap(settings)` builds what the service needs from its
settings, once, before the app is wired (the LLM policy its author is chosen by, the embedder and
the judgement models); `main.create_app` wires the bus and the lifespan around it (the database
opens in the lifespan). Libraries get their section from here, never from the environment."""

from __future__ import annotations

from dataclasses import dataclass

from research_corpus.embedding import Embedder, configure_embedder, get_embedder
from research_judgement import configure_judgement
from research_llm import LlmPolicy
from research_reviewer.settings import ReviewerServiceSettings


@dataclass(frozen=True)
class Deps:
    """What the reviewer is built from."""

    settings: ReviewerServiceSettings
    llm: LlmPolicy  # which engines, in which order, with what budget
    embedder: Embedder  # the process's (its micro-batching worker and vector cache)


def bootstrap(settings: ReviewerServiceSettings) -> Deps:
    """The reviewer's dependencies from `settings`; the process-wide models are handed their sections
    here (they load on first use)."""
    configure_embedder(settings.corpus)
    configure_judgement(settings.judgement)
    return Deps(settings=settings, llm=LlmPolicy(settings.llm), embedder=get_embedder())
