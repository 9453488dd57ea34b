"""The LLM's veto on direction: the real provider chain against a local OpenAI-wire server that
agrees, disagrees or fails. A disagreement turns a SUPPORTED verdict into INSUFFICIENT EVIDENCE
with the reason and never flips it; a failure leaves the judge's verdict and says so."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from research_llm import build_chain
from research_platform.settings import LLMSettings
from research_verification import LabelledPassage, PassageStance, Verdict, decide_verdict
from research_verifier.pipeline import vetoed
from research_verifier.veto import LlmCheck
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer, prompt_of

pytestmark = pytest.mark.integration

CLAIM = "Exercise training improves peak oxygen uptake in heart failure."
QUOTE = "Exercise training increased peak VO2 compared with usual care (P < .001)."
SUPPORTING = [LabelledPassage("corpus:1", PassageStance.SUPPORTS, 0.9, 0, QUOTE)]


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


def check(server: FakeLLMServer) -> LlmCheck:
    settings = LLMSettings(
        provider="openai",
        openai_api_key="sk-test",
        openai_base_url=server.openai_url,
        openai_model="m1",
        timeout_s=5,
    )
    return LlmCheck(build_chain(settings), timeout_s=5.0)


def answer(stance: str) -> Behaviour:
    return Behaviour(text=json.dumps({"stance": stance}))


async def test_an_llm_that_agrees_leaves_the_verdict(fake: FakeLLMServer) -> None:
    fake.queue("openai", answer("SUPPORTS"))
    chosen, near, result = await vetoed(check(fake), CLAIM, SUPPORTING, [], 1)
    assert chosen == SUPPORTING and near == []
    assert result.ran and result.agrees
    assert decide_verdict(chosen).verdict is Verdict.PARTIALLY_SUPPORTED
    _, user = prompt_of("openai", fake.sent("openai")[-1].body)
    assert CLAIM in user and QUOTE in user  # the claim and the quoted sentences only


async def test_an_llm_that_disagrees_makes_it_insufficient_never_contradicted(
    fake: FakeLLMServer,
) -> None:
    fake.queue("openai", answer("CONTRADICTS"))
    chosen, near, result = await vetoed(check(fake), CLAIM, SUPPORTING, [], 1)
    assert chosen == []
    assert decide_verdict(chosen).verdict is Verdict.INSUFFICIENT_EVIDENCE
    assert result.ran and not result.agrees and "CONTRADICTS" in result.reason
    [moved] = near  # the quote is shown as the closest evidence, not counted, with the reason
    assert (moved.label, moved.leaning, moved.text) == (PassageStance.UNRELATED, "SUPPORT", QUOTE)
    assert "disagrees" in moved.reason


async def test_an_llm_that_fails_leaves_the_verdict_and_says_the_check_did_not_run(
    fake: FakeLLMServer,
) -> None:
    fake.queue("openai", Behaviour(status=500), Behaviour(status=500))
    chosen, _, result = await vetoed(check(fake), CLAIM, SUPPORTING, [], 1)
    assert chosen == SUPPORTING
    assert not result.ran and "did not run" in result.reason


async def test_a_mixed_verdict_is_not_asked(fake: FakeLLMServer) -> None:
    mixed = [
        *SUPPORTING,
        LabelledPassage("corpus:2", PassageStance.CONTRADICTS, 0.9, 0, "No change in peak VO2."),
    ]
    chosen, _, result = await vetoed(check(fake), CLAIM, mixed, [], 1)
    assert chosen == mixed and not result.ran
    assert fake.sent("openai") == []
