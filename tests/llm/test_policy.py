"""`research_llm.LlmPolicy`, the one LLM policy every service asks: which engines, in which order,
with what budget. Its order is the chain's, its budget the chain's, its choice the modes' — and
no service builds a chain or chooses an engine past it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import SecretStr

from research_llm import LlmPolicy, ProviderChain
from research_platform.settings import LLMSettings

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
OPENAI = SecretStr("sk-test")
GEMINI = SecretStr("gm-test")


@pytest.mark.parametrize(
    ("settings", "order"),
    [
        (LLMSettings(provider="offline", openai_api_key=OPENAI), ["offline"]),
        (LLMSettings(), ["offline"]),  # auto without a key
        (LLMSettings(openai_api_key=OPENAI), ["openai", "offline"]),
        (
            LLMSettings(openai_api_key=OPENAI, gemini_api_key=GEMINI),
            ["openai", "gemini", "offline"],
        ),
        (LLMSettings(provider="gemini", openai_api_key=OPENAI), ["gemini", "offline"]),
    ],
)
def test_the_order_is_the_chain_it_builds(settings: LLMSettings, order: list[str]) -> None:
    policy = LlmPolicy(settings)
    assert policy.order == order
    assert policy.chain().names == order
    assert policy.remote == (order != ["offline"])


def test_the_budget_is_the_one_every_run_of_its_chain_adopts() -> None:
    settings = LLMSettings(openai_api_key=OPENAI, run_budget_s=20.0, run_budget_tokens=5000)
    policy = LlmPolicy(settings)
    assert (policy.budget.seconds, policy.budget.tokens, policy.budget.usd) == (20.0, 5000, None)
    run = policy.chain().new_run()
    assert (run.budget_s, run.budget_tokens, run.budget_usd) == (20.0, 5000, None)


def test_the_choice_takes_the_remote_engine_only_when_a_remote_model_is_asked() -> None:
    def choose(policy: LlmPolicy) -> tuple[str, ProviderChain | None]:
        return policy.choose(
            remote=lambda chain: ("remote", chain), offline=lambda: ("offline", None)
        )

    kind, chain = choose(LlmPolicy(LLMSettings(openai_api_key=OPENAI)))
    assert kind == "remote" and chain is not None and chain.names == ["openai", "offline"]
    assert choose(LlmPolicy(LLMSettings())) == ("offline", None)
    offline = LlmPolicy(LLMSettings(openai_api_key=OPENAI), engine="offline")
    assert offline.order == ["offline"] and choose(offline) == ("offline", None)


def test_an_unknown_provider_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown LLM provider"):
        assert LlmPolicy(LLMSettings(provider="claude")).order


def test_no_service_builds_a_chain_or_chooses_an_engine_past_its_policy() -> None:
    """Every service that asks an LLM asks its `LlmPolicy`; `build_chain` and `choose_engine` are
    the policy's own parts."""
    found = []
    for path in sorted(REPO.glob("services/*/src/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            else:
                continue
            found += [
                f"{path.relative_to(REPO)}:{node.lineno} {name}"
                for name in names
                if name in {"build_chain", "choose_engine"}
            ]
    assert found == []
