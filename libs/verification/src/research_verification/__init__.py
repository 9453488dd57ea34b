"""Claim verification core, free of any service: parse a claim, classify passages, decide the verdict.

    parse_claim(claim) -> [Statement]                      claims.py (step 1)
    names_subject(subject, text)                           claims.py (does a paper name what a statement is about)
    on_topic(claim, papers) / judge_paper(claim, title, sentences)
    judge_abstracts(claim, papers)                         evidence.py (the abstract-level model: a whole abstract per paper)
                                                           evidence.py (step 3: the trained judgement, research_judgement)
    stated_conditions(sentence, claim)                     conditions.py (populations, doses, settings the claim does not name)
    null_result(sentence, claim)                           conditions.py (a non-significant trend: no support for a claimed effect)
    label_passages(predictions, source_id, statement)      passages.py (→ SUPPORTS/CONTRADICTS/QUALIFIES/UNRELATED)
    decide_verdict(passages, statements) -> Assessment     verdict.py (the rule, six verdicts × three confidences)
    judge_answer(question, quotes) -> AnswerJudgement      stance.py (the critic's non-answer check)
    reported(sentences)                                    sections.py (a structured abstract's sentences outside background / methods)

Passages are judged by the trained cross-encoders of `research_judgement` (docs/judgement.md);
the former frozen-MiniLM feature classifier is gone. SciFact's abstract-level label is
`research_judgement.metrics.abstract_decision` (evidence.py uses it).
"""

from research_verification.claims import MAX_CLAIM_CHARS, Statement, names_subject, parse_claim
from research_verification.conditions import Condition, null_result, stated_conditions
from research_verification.errors import ClaimParseError, VerificationError
from research_verification.evidence import (
    PaperJudgement,
    Thresholds,
    admits,
    judge_abstracts,
    judge_paper,
    on_topic,
    thresholds,
)
from research_verification.passages import LABELS, SentencePrediction, label_passages, stance_of
from research_verification.stance import (
    AnswerJudgement,
    AnswerStance,
    QuoteJudgement,
    asked_subject,
    judge_answer,
)
from research_verification.verdict import (
    Assessment,
    Confidence,
    LabelledPassage,
    PassageStance,
    Verdict,
    decide_verdict,
)

__all__ = [
    "LABELS",
    "MAX_CLAIM_CHARS",
    "AnswerJudgement",
    "AnswerStance",
    "Assessment",
    "ClaimParseError",
    "Condition",
    "Confidence",
    "LabelledPassage",
    "PaperJudgement",
    "PassageStance",
    "QuoteJudgement",
    "SentencePrediction",
    "Statement",
    "Thresholds",
    "Verdict",
    "VerificationError",
    "admits",
    "asked_subject",
    "decide_verdict",
    "judge_abstracts",
    "judge_answer",
    "judge_paper",
    "label_passages",
    "names_subject",
    "null_result",
    "on_topic",
    "parse_claim",
    "stance_of",
    "stated_conditions",
    "thresholds",
]
