"""What a service that asks an LLM is built from (researcher, critic, correlator, reviewer,
verifier, scout): its settings root, its one `LlmPolicy` and the process's embedder.

    def bootstrap(settings: CriticServiceSettings) -> Deps:   # the service's composition root
        return bootstrap_llm_service(settings)

`bootstrap_llm_service` hands the process-wide models their sections first (`configure_models`:
the embedder its `corpus` group, the judgement models their `judgement` section; they load on
first use), once, before the service's app is wired. Libraries get their section from here,
never from the environment (docs/architecture.md, "Configuration: read once, passed in")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from research_corpus.embedding import Embedder, configure_embedder, get_embedder
from research_judgement import configure_judgement
from research_llm.engines import EngineChoice
from research_llm.policy import LlmPolicy
from research_platform.settings import Settings

S = TypeVar("S", bound=Settings)  # the service's settings root


@dataclass(frozen=True)
class LlmServiceDeps(Generic[S]):
    """What a service that asks an LLM is built from."""

    settings: S
    llm: LlmPolicy  # which engines, in which order, with what budget
    embedder: Embedder  # the process's (its micro-batching worker and vector cache)


def configure_models(settings: Settings) -> None:
    """Hand the process-wide models their sections of `settings`: the embedding model its
    `corpus` group, the judgement models their `judgement` section (both load on first use)."""
    configure_embedder(settings.corpus)
    configure_judgement(settings.judgement)


def bootstrap_llm_service(settings: S, *, engine: EngineChoice = "llm") -> LlmServiceDeps[S]:
    """The dependencies of a service that asks an LLM, from its `settings`, after the process-wide
    models got their sections; `engine="offline"` is a policy that never builds a chain (the
    scout's `SCOUT__ENGINE`)."""
    configure_models(settings)
    return LlmServiceDeps(settings, LlmPolicy(settings.llm, engine=engine), get_embedder())
