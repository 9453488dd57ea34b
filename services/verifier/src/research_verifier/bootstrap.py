"""The verifier's composition root (`research_llm.bootstrap`), shared by the services that ask an
LLM: the policy its engine (or veto) is chosen by, the judgement models that decide."""

from __future__ import annotations

from research_llm.bootstrap import LlmServiceDeps, bootstrap_llm_service
from research_verifier.settings import VerifierServiceSettings

Deps = LlmServiceDeps[VerifierServiceSettings]


def bootstrap(settings: VerifierServiceSettings) -> Deps:
    return bootstrap_llm_service(settings)
