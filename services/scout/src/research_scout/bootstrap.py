"""The scout's composition root (`research_llm.bootstrap`): its policy follows `SCOUT__ENGINE`
(`offline` unless set), and its offline engine loads the process's models."""

from __future__ import annotations

from research_llm.bootstrap import LlmServiceDeps, bootstrap_llm_service
from research_scout.settings import ScoutServiceSettings

Deps = LlmServiceDeps[ScoutServiceSettings]


def bootstrap(settings: ScoutServiceSettings) -> Deps:
    return bootstrap_llm_service(settings, engine=settings.scout.engine)
