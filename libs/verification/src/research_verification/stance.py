"""Does a claim's evidence answer its question? The offline critic's stance check.

A claim drafted for "Does screening older people … lead to improved vision?" that quotes
"Further work is needed to clarify …" takes no stance: it is true to its source and still
useless as an answer. A quote is a **non-answer** when it states an aim or objective, gives
background, or calls for more research (cue patterns below), or when the trained stance model
(`research_judgement`, via `evidence`) does not find it evidence on the question turned into a
statement (P(evidence) below the shipped evidence threshold). The remaining quotes vote with
their stance probabilities for SUPPORT or CONTRADICT; no voting quote → non-answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from research_verification.claims import parse_claim
from research_verification.errors import ClaimParseError
from research_verification.evidence import Judgement, default_judge, thresholds

NON_ANSWER_CUES = re.compile(
    r"\b(?:further|more|additional|future) (?:work|research|studies|study|trials|investigation)s? "
    r"(?:is|are|will be|would be|should|may be)?\s*(?:needed|required|warranted|necessary)|"
    r"\b(?:needs?|merits?|warrants?|deserves?) further (?:study|investigation|research)|"
    r"\bremains? to be (?:determined|established|elucidated|clarified|seen)|"
    r"\b(?:it is|it remains|remains|is still|are still) (?:unclear|unknown|poorly understood|not known)|"
    r"\blittle is known\b|"
    r"^\s*(?:objectives?|aims?|purpose|background|introduction|context|importance|rationale|design|setting|methods?)\b|"
    r"\b(?:we|this study|this review|the present study|this trial) (?:aimed|aims|sought|seeks|set out|"
    r"investigated|investigates|examined|examines|assessed|assesses|evaluated|evaluates|explored|explores)\b|"
    r"\b(?:the )?(?:aim|objective|purpose|goal) (?:of|was|is)\b|"
    r"^\s*to (?:assess|determine|investigate|examine|evaluate|explore|compare|test|study|review)\b",
    re.IGNORECASE,
)
# "Is it true that X?" asks about X itself; "Does X …?" about "X …".
_LEADING_AUXILIARY = re.compile(
    r"^\s*(?:(?:is|was) it (?:true|the case) that|does|do|did|is|are|was|were|can|could|will|would|has|have|should|may)\s+",
    re.IGNORECASE,
)


class AnswerStance(StrEnum):
    SUPPORT = "support"
    CONTRADICT = "contradict"
    NON_ANSWER = "non-answer"


@dataclass(frozen=True, slots=True)
class QuoteJudgement:
    quote: str
    stance: AnswerStance
    strength: float
    reason: str


@dataclass(frozen=True, slots=True)
class AnswerJudgement:
    """The claim's overall stance on the question and why, quote by quote."""

    stance: AnswerStance
    strength: float
    quotes: tuple[QuoteJudgement, ...]

    @property
    def answers(self) -> bool:
        return self.stance is not AnswerStance.NON_ANSWER


def question_as_statement(question: str) -> str:
    """ "Does X lead to Y?" → "X lead to Y", "Is it true that X?" → "X": the form the stance model was
    trained on (claims)."""
    return _LEADING_AUXILIARY.sub("", question.strip().rstrip("?").strip())


@lru_cache(maxsize=256)  # the scout asks it once per hit of the same prompt
def asked_subject(prompt: str) -> str:
    """What a question or claim is about — the subject of its statement ("Does exercise training
    improve …?" → "exercise training") — or "" for a topic without a verb ("exercise training
    quality of life"), whose words are all the subject and none the outcome."""
    try:
        statements = parse_claim(question_as_statement(prompt))
    except ClaimParseError:
        return ""
    return statements[0].subject if statements and statements[0].predicate else ""


def judge_quote(
    statement: str, quote: str, probs: Sequence[float], evidence_threshold: float
) -> QuoteJudgement:
    """One quote's stance given the stance model's (SUPPORT, CONTRADICT, NEI) probabilities."""
    if NON_ANSWER_CUES.search(quote):
        return QuoteJudgement(
            quote,
            AnswerStance.NON_ANSWER,
            1.0,
            "states an aim, background or a call for more research",
        )
    support, contradict, nei = (float(p) for p in probs)
    if 1.0 - nei < evidence_threshold:
        return QuoteJudgement(
            quote, AnswerStance.NON_ANSWER, nei, "the stance model finds no stance on the question"
        )
    if support >= contradict:
        return QuoteJudgement(
            quote, AnswerStance.SUPPORT, support, "supports the question's statement"
        )
    return QuoteJudgement(
        quote, AnswerStance.CONTRADICT, contradict, "contradicts the question's statement"
    )


def judge_answer(
    question: str,
    quotes: Sequence[str],
    judge: Judgement | None = None,
    known_vectors: Mapping[str, Sequence[float]] | None = None,
    titles: Sequence[str] | None = None,
) -> AnswerJudgement:
    """Whether `quotes` (a claim's supporting quotes) take a stance on `question`.

    The question is judged as a statement ("Does X lead to Y?" → "X lead to Y"), the form the
    stance model was trained on (claims); each quote is read with its source's title when `titles`
    gives it (the trained form, "title: sentence"; the model also saw 30 % of its training
    sentences without one). Side effect: the process-wide judge loads on first use.
    `known_vectors` (the corpus's stored sentence vectors of the quotes, which the critic reads)
    served the former bi-encoder classifier; the cross-encoder reads the texts themselves and
    ignores them.
    """
    del known_vectors  # a cross-encoder reads each (statement, quote) pair, not stored vectors
    named = [
        (q, (titles[i] if titles and i < len(titles) else "") or None)
        for i, q in enumerate(quotes)
        if q and q.strip()
    ]
    if not named:
        return AnswerJudgement(AnswerStance.NON_ANSWER, 0.0, ())
    quotes = [q for q, _ in named]
    statement = question_as_statement(question)
    judge = judge or default_judge()
    probs = judge.stance(statement, quotes, [t for _, t in named])
    limit = thresholds(judge).evidence
    judged = tuple(judge_quote(statement, q, p, limit) for q, p in zip(quotes, probs, strict=True))
    votes = {AnswerStance.SUPPORT: 0.0, AnswerStance.CONTRADICT: 0.0}
    for j in judged:
        if j.stance in votes:
            votes[j.stance] += j.strength
    if not any(votes.values()):
        return AnswerJudgement(AnswerStance.NON_ANSWER, max(j.strength for j in judged), judged)
    stance = max(votes, key=lambda s: votes[s])
    return AnswerJudgement(stance, max(j.strength for j in judged if j.stance is stance), judged)
