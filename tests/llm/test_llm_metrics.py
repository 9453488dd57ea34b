"""LLM calls, failures, tokens and latency per provider, read back from a real `/metrics` scrape
after the chain asked a local server that speaks the real OpenAI and Gemini wire formats."""

from __future__ import annotations

import json

import pytest

from research_llm import build_chain
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer
from tests.llm.test_providers import EVIDENCE, GOOD_DRAFT, QUESTION, settings
from tests.scrape import scrape, value

pytestmark = pytest.mark.unit


@pytest.fixture
def llm_server():
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


def _read(url: str) -> dict[str, float]:
    samples = scrape(url)
    return {
        "openai_ok": value(
            samples, "research_llm_calls_total", provider="openai", operation="draft", outcome="ok"
        )
        or 0,
        "openai_failed": value(
            samples,
            "research_llm_calls_total",
            provider="openai",
            operation="draft",
            outcome="failed",
        )
        or 0,
        "openai_429": value(
            samples, "research_llm_failures_total", provider="openai", reason="http_429"
        )
        or 0,
        "gemini_ok": value(
            samples, "research_llm_calls_total", provider="gemini", operation="draft", outcome="ok"
        )
        or 0,
        "gemini_503": value(
            samples, "research_llm_failures_total", provider="gemini", reason="http_503"
        )
        or 0,
        "offline_ok": value(
            samples, "research_llm_calls_total", provider="offline", operation="draft", outcome="ok"
        )
        or 0,
        "openai_prompt": value(
            samples, "research_llm_tokens_total", provider="openai", kind="prompt"
        )
        or 0,
        "openai_completion": value(
            samples, "research_llm_tokens_total", provider="openai", kind="completion"
        )
        or 0,
        "gemini_prompt": value(
            samples, "research_llm_tokens_total", provider="gemini", kind="prompt"
        )
        or 0,
        "openai_seconds": value(
            samples,
            "research_llm_call_duration_seconds_count",
            provider="openai",
            operation="draft",
        )
        or 0,
    }


async def test_calls_failures_tokens_and_latency_per_provider(
    llm_server: FakeLLMServer, metrics_url: str
) -> None:
    chain = build_chain(settings(llm_server), encoder=None)
    before = _read(metrics_url)

    llm_server.queue("openai", Behaviour(text=json.dumps(GOOD_DRAFT)))
    assert (await chain.draft_claim(QUESTION, None, EVIDENCE)).provider == "openai"
    llm_server.queue("openai", Behaviour(status=429))
    llm_server.queue("gemini", Behaviour(text=json.dumps(GOOD_DRAFT)))
    assert (await chain.draft_claim(QUESTION, None, EVIDENCE)).provider == "gemini"
    llm_server.queue("openai", Behaviour(status=429))
    llm_server.queue("gemini", Behaviour(status=503))
    assert (await chain.draft_claim(QUESTION, None, EVIDENCE)).provider == "offline"

    after = _read(metrics_url)
    delta = {name: after[name] - before[name] for name in after}
    assert delta == {
        "openai_ok": 1,
        "openai_failed": 2,
        "openai_429": 2,
        "gemini_ok": 1,
        "gemini_503": 1,
        "offline_ok": 1,
        "openai_prompt": 1,
        "openai_completion": 1,  # what the server's `usage` reported
        "gemini_prompt": 1,
        "openai_seconds": 3,  # one latency observation per question put to it
    }
