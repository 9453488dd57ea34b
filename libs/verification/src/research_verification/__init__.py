"""Claim verification core, free of any service: parse a claim, classify passages, decide the verdict.

    parse_claim(claim) -> [Statement]                      claims.py (step 1)
    get_classifier().classify(claim, sentences)            classifier.py (step 3, offline model)
    label_passages(predictions, source_id, statement)      passages.py (→ SUPPORTS/CONTRADICTS/QUALIFIES/UNRELATED)
    decide_verdict(passages, statements) -> Assessment     verdict.py (the rule, six verdicts × three confidences)
    abstract_label(probs, thresholds) -> AbstractLabel     abstracts.py (SciFact abstract-level label)
    judge_answer(question, quotes) -> AnswerJudgement      stance.py (the critic's non-answer check)
"""

from research_verification.abstracts import AbstractLabel, abstract_label
from research_verification.claims import MAX_CLAIM_CHARS, Statement, parse_claim
from research_verification.classifier import LABELS, PassageClassifier, SentencePrediction, get_classifier
from research_verification.errors import ClaimParseError, VerificationError, WeightsUnavailable
from research_verification.passages import label_passages, stance_of
from research_verification.stance import AnswerJudgement, AnswerStance, QuoteJudgement, judge_answer
from research_verification.verdict import (
    Assessment,
    Confidence,
    LabelledPassage,
    PassageStance,
    Verdict,
    decide_verdict,
)

__all__ = [
    "LABELS", "MAX_CLAIM_CHARS", "AbstractLabel", "AnswerJudgement", "AnswerStance", "Assessment",
    "ClaimParseError", "Confidence", "LabelledPassage", "PassageClassifier", "PassageStance",
    "QuoteJudgement", "SentencePrediction", "Statement", "Verdict", "VerificationError",
    "WeightsUnavailable", "abstract_label", "decide_verdict", "get_classifier", "judge_answer",
    "label_passages", "parse_claim", "stance_of",
]
