"""Each service's composition root: `bootstrap(settings) -> Deps` builds what the service needs
from the settings it was handed — the LLM policy from its `llm` group, the process's embedder
from its `corpus` group — so a service never reads values other than its own."""

from __future__ import annotations

import ast
import importlib

import pytest
from pydantic import SecretStr

from research_corpus.embedding import configure_embedder
from research_judgement import configure_judgement
from research_platform.settings import CorpusSettings, JudgementSettings, LLMSettings
from tests.conftest import REPO

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


def test_the_gateways_bootstrap_builds_its_key_check_hosts_and_edge_from_its_settings() -> None:
    from research_gateway.bootstrap import bootstrap
    from research_gateway.settings import EdgeSettings, GatewaySettings
    from research_platform import installation

    before = installation.current()
    settings = GatewaySettings(
        gateway_host="10.1.2.3",
        gateway_allowed_hosts=["research.example.org"],
        gateway_edge=EdgeSettings(max_body_bytes=4096),
        installation_secret=SecretStr("s" * 32),
    )
    try:
        deps = bootstrap(settings)
        assert installation.current() == b"s" * 32  # audit digests and task ids keyed by it
    finally:
        installation.install(before)
    assert deps.settings is settings and deps.edge.max_body_bytes == 4096
    assert deps.allowed.public == ("10.1.2.3", "research.example.org")
    assert deps.guard.open is False


def test_the_gateways_bootstrap_gives_the_shared_root_the_groups_defaults() -> None:
    from research_gateway.bootstrap import bootstrap
    from research_gateway.settings import ConsoleSettings, EdgeSettings
    from research_platform import installation
    from research_platform.settings import Settings

    before = installation.current()
    try:
        deps = bootstrap(Settings(installation_secret=SecretStr("s" * 32)))
    finally:
        installation.install(before)
    assert deps.edge == EdgeSettings() and deps.console == ConsoleSettings()


def test_the_librarians_bootstrap_hands_it_its_own_group() -> None:
    from research_librarian.bootstrap import bootstrap
    from research_librarian.settings import LibrarianServiceSettings, LibrarianSettings

    group = LibrarianSettings(batch_size=7)
    deps = bootstrap(LibrarianServiceSettings(librarian=group))
    assert deps.librarian is deps.settings.librarian and deps.librarian.batch_size == 7


@pytest.mark.parametrize(
    "service", sorted(p.name for p in (REPO / "services").iterdir() if p.is_dir())
)
def test_every_service_builds_its_app_from_its_bootstrap(service: str) -> None:
    package = REPO / "services" / service / "src" / f"research_{service}"
    assert callable(importlib.import_module(f"research_{service}.bootstrap").bootstrap)
    tree = ast.parse((package / "main.py").read_text(encoding="utf-8"))
    create_app = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == "create_app"
    )
    called = {
        node.func.id
        for node in ast.walk(create_app)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert "bootstrap" in called, f"research_{service}.main.create_app does not call bootstrap"
