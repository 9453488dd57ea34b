"""Does a claim's evidence answer its question? The offline critic's stance check.

A claim drafted for "Does screening older people … lead to improved vision?" that quotes
"Further work is needed to clarify …" takes no stance: it is true to its source and still
useless as an answer. A quote is a **non-answer** when it states an aim or objective, gives
background, or calls for more research (cue patterns below), or when the passage classifier
finds it unrelated to the question turned into a statement. The remaining quotes vote with
their classifier probabilities for SUPPORT or CONTRADICT; no voting quote → non-answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from research_verification.classifier import PassageClassifier, get_classifier

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
    """"Does X lead to Y?" → "X lead to Y", "Is it true that X?" → "X": the form the classifier was
    trained on (claims)."""
    return _LEADING_AUXILIARY.sub("", question.strip().rstrip("?").strip())


def judge_quote(statement: str, quote: str, probs: Sequence[float]) -> QuoteJudgement:
    """One quote's stance given the classifier's (SUPPORT, CONTRADICT, NEI) probabilities."""
    if NON_ANSWER_CUES.search(quote):
        return QuoteJudgement(quote, AnswerStance.NON_ANSWER, 1.0, "states an aim, background or a call for more research")
    support, contradict, nei = (float(p) for p in probs)
    if nei >= max(support, contradict):
        return QuoteJudgement(quote, AnswerStance.NON_ANSWER, nei, "the classifier finds no stance on the question")
    if support >= contradict:
        return QuoteJudgement(quote, AnswerStance.SUPPORT, support, "supports the question's statement")
    return QuoteJudgement(quote, AnswerStance.CONTRADICT, contradict, "contradicts the question's statement")


def judge_answer(
    question: str,
    quotes: Sequence[str],
    classifier: PassageClassifier | None = None,
    known_vectors: Mapping[str, Sequence[float]] | None = None,
) -> AnswerJudgement:
    """Whether `quotes` (a claim's supporting quotes) take a stance on `question`.

    Side effect: embeds the question and the quotes `known_vectors` has no vector of (quotes are
    corpus sentences, whose vectors the ingest stored) with the process-wide MiniLM model.
    The question is embedded as a statement, never reused from the researcher's vector of the
    question's own wording: on 300 SciFact train claims asked as "Is it true that …?" with their
    gold rationale as quotes, the statement's vector gave the right stance for 96.7 %, the
    question's for 88.7 % (`task bench:stance-vectors`).
    """
    quotes = [q for q in quotes if q and q.strip()]
    if not quotes:
        return AnswerJudgement(AnswerStance.NON_ANSWER, 0.0, ())
    statement = question_as_statement(question)
    probs = (classifier or get_classifier()).predict_proba(statement, quotes, known_vectors)
    judged = tuple(judge_quote(statement, q, p) for q, p in zip(quotes, probs, strict=True))
    votes = {AnswerStance.SUPPORT: 0.0, AnswerStance.CONTRADICT: 0.0}
    for j in judged:
        if j.stance in votes:
            votes[j.stance] += j.strength
    if not any(votes.values()):
        return AnswerJudgement(AnswerStance.NON_ANSWER, max(j.strength for j in judged), judged)
    stance = max(votes, key=lambda s: votes[s])
    return AnswerJudgement(stance, max(j.strength for j in judged if j.stance is stance), judged)
