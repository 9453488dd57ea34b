"""The researcher's composition root (`research_llm.bootstrap`): the policy its claims are drafted
by, the embedder its questions share and the judgement models its relevance gates load; the
app takes the process's embedder as it starts (`main.create_app`)."""

from __future__ import annotations

from research_llm.bootstrap import LlmServiceDeps, bootstrap_llm_service
from research_researcher.settings import ResearcherServiceSettings

Deps = LlmServiceDeps[ResearcherServiceSettings]


def bootstrap(settings: ResearcherServiceSettings) -> Deps:
    return bootstrap_llm_service(settings)
