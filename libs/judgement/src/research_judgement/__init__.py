"""Trained judgement: three small judgements every mode of the engine asks, as cross-encoders.

    relevance(question, passages) -> (n,)   is this paper / passage about the question
    evidence(claim, sentences)    -> (n,)   is this sentence a finding that bears on the claim
    stance(claim, sentences)      -> (n, 3) SUPPORT / CONTRADICT / NEI

Calibrated probabilities; LoRA adapters + linear heads over the packaged all-MiniLM-L6-v2,
trained on SciFact train (`scripts/train_judgement.py`, docs/judgement.md). Scoring goes
through `scorer.CrossEncoder` (tokenize → encoder → head), the one class a faster backend replaces.
"""

from research_judgement.configured import configure_judgement
from research_judgement.errors import JudgementError, WeightsUnavailable
from research_judgement.judge import (
    Judge,
    evidence,
    get_judge,
    relevance,
    stance,
)
from research_judgement.metrics import AbstractDecision, abstract_decision
from research_judgement.scifact import LABELS, passage_text

__all__ = [
    "LABELS",
    "AbstractDecision",
    "Judge",
    "JudgementError",
    "WeightsUnavailable",
    "abstract_decision",
    "configure_judgement",
    "evidence",
    "get_judge",
    "passage_text",
    "relevance",
    "stance",
]
