"""From the classifier's three probabilities to the report's four passage stances.

SciFact has no QUALIFIES label, so it is derived: a relevant passage that states its finding
under a condition ("only in", "among women", "however") or whose SUPPORT and CONTRADICT
probabilities are close (it points both ways) qualifies the claim rather than settling it.
"""

from __future__ import annotations

import re

from research_verification.classifier import SentencePrediction
from research_verification.verdict import LabelledPassage, PassageStance

CONDITION_CUES = re.compile(
    r"\b(only (?:in|among|when|if|for|at)|except|unless|subgroup|subset|depend(?:s|ed|ing)? on|"
    r"restricted to|limited to|in some|under certain|provided that|however|but not|whereas|"
    r"although|only after|only with|at high doses?|at low doses?)\b",
    re.IGNORECASE,
)
AMBIGUITY_MARGIN = 0.15


def stance_of(prediction: SentencePrediction) -> tuple[PassageStance, float]:
    """The passage stance and its strength (a probability) for one classified sentence."""
    if prediction.label == "NEI":
        return PassageStance.UNRELATED, prediction.nei
    strength = max(prediction.support, prediction.contradict)
    close = abs(prediction.support - prediction.contradict) < AMBIGUITY_MARGIN
    if close or (prediction.label == "SUPPORT" and CONDITION_CUES.search(prediction.sentence)):
        return PassageStance.QUALIFIES, strength
    if prediction.label == "SUPPORT":
        return PassageStance.SUPPORTS, strength
    return PassageStance.CONTRADICTS, strength


def label_passages(
    predictions: list[SentencePrediction], source_id: str, statement: int = 0
) -> list[LabelledPassage]:
    """Labelled passages of one source for `verdict.decide_verdict`."""
    out = []
    for p in predictions:
        label, strength = stance_of(p)
        out.append(LabelledPassage(source_id, label, round(strength, 4), statement, p.sentence))
    return out
