"""The critic's composition root, that of a service that asks an LLM (`research_llm.bootstrap`):
its verdicts are asked of the policy, its evidence checks load the judgement models."""

from __future__ import annotations

from research_critic.settings import CriticServiceSettings
from research_llm.bootstrap import LlmServiceDeps, bootstrap_llm_service

Deps = LlmServiceDeps[CriticServiceSettings]


def bootstrap(settings: CriticServiceSettings) -> Deps:
    return bootstrap_llm_service(settings)
