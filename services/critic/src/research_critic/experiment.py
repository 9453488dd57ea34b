"""The critic's work: judge a claim against the active claims of its entity, under the SLA.

No database, no broker: the provider chain answers (remote models first, the offline engine
last) and `asyncio.wait_for` enforces the critique SLA. A `TimeoutError` is the caller's to
count towards quarantine.

The offline engine compares claims but cannot tell whether a claim answers its question: a
quote that states an aim, gives background or says "further work is needed" is true to its
source and still no answer. So when the offline engine judged, the claim's quotes go through
`research_verification.judge_answer` (the SciFact-trained passage classifier plus non-answer
cues) and a promotion of a non-answer becomes a rejection, with the reason. The classifier
judges statements, so only a yes/no question ("Does X lead to Y?") is turned into one and
classified; for an open question ("What about X?") a claim is a non-answer only when every quote
states an aim, background or a call for more research.
"""

from __future__ import annotations

import asyncio
import re

from research_contracts import Verdict
from research_critic.prepare import Review
from research_llm import JudgeOutcome, ProviderChain
from research_verification import AnswerJudgement, AnswerStance, QuoteJudgement, judge_answer
from research_verification.stance import NON_ANSWER_CUES

OFFLINE = "offline"
POLAR = re.compile(
    r"^\s*(?:does|do|did|is|are|was|were|can|could|will|would|has|have|had|should|may|might)\b",
    re.IGNORECASE,
)


async def judge(review: Review, chain: ProviderChain, sla_s: float) -> JudgeOutcome:
    """The chain's verdict on `review.candidate`; raises `TimeoutError` past `sla_s` seconds."""
    return await asyncio.wait_for(_judge(review, chain), timeout=sla_s)


async def _judge(review: Review, chain: ProviderChain) -> JudgeOutcome:
    outcome = await chain.judge_claim(review.candidate, review.active)
    if (
        outcome.provider != OFFLINE
        or not review.question
        or outcome.verdict.verdict is Verdict.reject
    ):
        return outcome
    supports = [support for support in review.candidate.supports if support.quote.strip()]
    quotes = [support.quote for support in supports]
    if not quotes:
        return outcome
    if not POLAR.match(review.question):
        if all(NON_ANSWER_CUES.search(q) for q in quotes):
            judged = tuple(
                QuoteJudgement(
                    q,
                    AnswerStance.NON_ANSWER,
                    1.0,
                    "states an aim, background or a call for more research",
                )
                for q in quotes
            )
            return non_answer(outcome, AnswerJudgement(AnswerStance.NON_ANSWER, 1.0, judged))
        return outcome
    answer = await asyncio.to_thread(
        judge_answer,
        review.question,
        quotes,
        None,
        review.quote_vectors,
        [support.title for support in supports],
    )
    return outcome if answer.answers else non_answer(outcome, answer)


def non_answer(outcome: JudgeOutcome, answer: AnswerJudgement) -> JudgeOutcome:
    """The outcome turned into a rejection: the claim's quotes take no stance on the question."""
    reasons = "; ".join(dict.fromkeys(q.reason for q in answer.quotes)) or "no quote"
    verdict = outcome.verdict.model_copy(
        update={
            "verdict": Verdict.reject,
            "supersedes": [],
            "reasoning": f"the claim does not answer its question ({reasons}); {outcome.verdict.reasoning}".strip(),
        }
    )
    return outcome.model_copy(update={"verdict": verdict})
