"""The offline critic rejects a claim that does not answer its question (issue 11): the quotes
go through `research_verification.judge_answer` after the offline engine judged."""

from __future__ import annotations

import uuid

import pytest

from research_contracts import Support, Verdict
from research_critic import experiment
from research_critic.prepare import Review
from research_llm import ClaimForReview, build_chain
from research_platform.settings import LLMSettings

pytestmark = pytest.mark.unit  # the offline chain and the shipped classifier: no servers

QUESTION = "Does screening older people in the community lead to improved vision?"


def review(quote: str, question: str = QUESTION) -> Review:
    candidate = ClaimForReview(
        claim_id=uuid.uuid4(),
        entity="vision screening",
        statement=quote,
        confidence=0.8,
        supports=[
            Support(source_id="corpus:1", title="Vision screening of older people", quote=quote)
        ],
    )
    return Review(candidate=candidate, active=[], question=question)


@pytest.fixture(scope="module")
def chain():
    return build_chain(LLMSettings(provider="offline"))


@pytest.mark.parametrize(
    "quote",
    [
        "Further work is needed to clarify the role of vision screening in older people.",
        "The aim of this study was to assess vision screening in older people living in the community.",
    ],
)
async def test_a_non_answer_is_rejected(chain, quote: str) -> None:
    outcome = await experiment.judge(review(quote), chain, 120)
    assert outcome.verdict.verdict is Verdict.reject
    assert "does not answer its question" in outcome.verdict.reasoning


async def test_an_open_question_is_held_only_to_the_non_answer_cues(chain) -> None:
    quote = "Screening of older people in the community did not improve vision compared with no screening."
    outcome = await experiment.judge(review(quote, "What about vision screening?"), chain, 120)
    assert "does not answer its question" not in outcome.verdict.reasoning
    cued = await experiment.judge(
        review("Little is known about vision screening.", "What about vision screening?"),
        chain,
        120,
    )
    assert cued.verdict.verdict is Verdict.reject


async def test_a_stance_taking_quote_is_not_rejected_as_a_non_answer(chain) -> None:
    quote = "Screening of older people in the community did not lead to improved vision compared with no screening."
    outcome = await experiment.judge(review(quote), chain, 120)
    assert "does not answer its question" not in outcome.verdict.reasoning
