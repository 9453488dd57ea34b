"""The reviewer's composition root (`research_llm.bootstrap`): the policy its author is chosen by,
and the embedder and judgement models its offline author and peer review load."""

from __future__ import annotations

from research_llm.bootstrap import LlmServiceDeps, bootstrap_llm_service
from research_reviewer.settings import ReviewerServiceSettings

Deps = LlmServiceDeps[ReviewerServiceSettings]


def bootstrap(settings: ReviewerServiceSettings) -> Deps:
    return bootstrap_llm_service(settings)
