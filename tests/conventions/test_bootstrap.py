"""Each service's composition root: `bootstrap(settings) -> Deps` builds what the service needs
from the settings it was handed — the LLM policy from its `llm` group, the process's embedder
from its `corpus` group — so a service never reads values other than its own."""

from __future__ import annotations

import importlib

import pytest
from pydantic import SecretStr

from research_corpus.embedding import configure_embedder
from research_judgement import configure_judgement
from research_platform.settings import CorpusSettings, JudgementSettings, LLMSettings

pytestmark = pytest.mark.unit

# service → its settings root, by name in `research_<service>.settings`
SERVICES = {
    "connector": "ConnectorServiceSettings",
    "correlator": "CorrelatorServiceSettings",
    "critic": "CriticServiceSettings",
    "replicator": "ReplicatorServiceSettings",
    "researcher": "ResearcherServiceSettings",
    "reviewer": "ReviewerServiceSettings",
    "scout": "ScoutServiceSettings",
    "verifier": "VerifierServiceSettings",
}


@pytest.fixture(autouse=True)
def _defaults_after() -> object:
    yield
    configure_embedder(CorpusSettings())
    configure_judgement(JudgementSettings())


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_bootstrap_builds_the_service_from_its_own_settings(service: str) -> None:
    root = getattr(importlib.import_module(f"research_{service}.settings"), SERVICES[service])
    bootstrap = importlib.import_module(f"research_{service}.bootstrap").bootstrap
    llm = LLMSettings(provider="openai", openai_api_key=SecretStr("sk-test"), run_budget_s=9.0)
    settings = root(corpus=CorpusSettings(embed_batch_size=5), llm=llm)
    deps = bootstrap(settings)
    assert deps.settings is settings
    if hasattr(deps, "llm"):
        assert deps.llm.settings is settings.llm and deps.llm.budget.seconds == 9.0
        offline_by_default = service == "scout"  # SCOUT__ENGINE=offline unless set
        assert deps.llm.order == (["offline"] if offline_by_default else ["openai", "offline"])
    if hasattr(deps, "embedder"):
        assert deps.embedder.batch_size == 5  # the process's embedder, from this corpus group


def test_the_scouts_policy_follows_its_engine_setting() -> None:
    from research_scout.bootstrap import bootstrap
    from research_scout.settings import ScoutServiceSettings, ScoutSettings

    llm = LLMSettings(provider="openai", openai_api_key=SecretStr("sk-test"))
    deps = bootstrap(ScoutServiceSettings(llm=llm, scout=ScoutSettings(engine="llm")))
    assert deps.llm.order == ["openai", "offline"]
