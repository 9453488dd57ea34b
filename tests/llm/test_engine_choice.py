"""`research_llm.choose_engine`, the one engine choice of the modes: the remote engine only when
the chain holds a remote model, the offline engine otherwise, and no chain at all when the mode
is set offline (`SCOUT__ENGINE=offline`)."""

from __future__ import annotations

from typing import Any

import pytest

from research_llm import ProviderChain, build_chain, choose_engine, remote_configured
from research_platform.settings import LLMSettings

pytestmark = pytest.mark.unit


def _choose(settings: LLMSettings, **kwargs: Any) -> tuple[str, ProviderChain | None]:
    return choose_engine(
        settings,
        remote=lambda chain: ("remote", chain),
        offline=lambda: ("offline", None),
        **kwargs,
    )


def test_a_remote_model_in_the_chain_chooses_the_remote_engine() -> None:
    settings = LLMSettings(provider="openai", openai_api_key="sk-test")
    kind, chain = _choose(settings)
    assert kind == "remote" and chain is not None and remote_configured(chain)
    assert next(type(p).__name__ for p in chain.providers) == "OpenAIProvider"


def test_without_a_remote_model_the_offline_engine_is_chosen() -> None:
    assert _choose(LLMSettings(provider="offline")) == ("offline", None)
    assert _choose(LLMSettings(provider="auto")) == ("offline", None)  # no key, no remote model
    assert not remote_configured(build_chain(LLMSettings(provider="offline"), encoder=None))
    assert not remote_configured(None)


def test_an_offline_mode_builds_no_chain_even_with_a_remote_model_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from research_llm import engines

    def refuse(settings: LLMSettings) -> ProviderChain:
        raise AssertionError("an offline mode built a chain")

    monkeypatch.setattr(engines, "build_chain", refuse)
    settings = LLMSettings(provider="openai", openai_api_key="sk-test")
    assert _choose(settings, engine="offline") == ("offline", None)
