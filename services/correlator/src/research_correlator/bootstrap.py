"""The correlator's composition root: what every service that asks an LLM is built from
(`research_llm.bootstrap`): the policy its findings are asked of, and the models the offline
engine loads. `main.create_app` wires the bus and the lifespan around it."""

from __future__ import annotations

from research_correlator.settings import CorrelatorServiceSettings
from research_llm.bootstrap import LlmServiceDeps, bootstrap_llm_service

Deps = LlmServiceDeps[CorrelatorServiceSettings]


def bootstrap(settings: CorrelatorServiceSettings) -> Deps:
    return bootstrap_llm_service(settings)
