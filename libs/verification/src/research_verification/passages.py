"""From the stance model's three probabilities to the report's four passage stances.

SciFact has no QUALIFIES label, so it is derived from what the evidence says, never from how
sure the model is: a supporting sentence that states a condition the claim does not name — a
population, a dose, a setting, an explicit restriction (`conditions.stated_conditions`) —
qualifies the claim: it holds under that condition. A contradicting sentence stays a
contradiction, whatever its conditions (the claim as stated is what it contradicts). A
"supporting" sentence that reports a non-significant result ("a trend toward …; P = 0.10") for
a claim of an effect supports nothing (`conditions.null_result`): it is UNRELATED.
"""

from __future__ import annotations

from dataclasses import dataclass

from research_verification.conditions import null_result, stated_conditions
from research_verification.verdict import LabelledPassage, PassageStance

LABELS: tuple[str, str, str] = ("SUPPORT", "CONTRADICT", "NEI")


@dataclass(frozen=True, slots=True)
class SentencePrediction:
    """One sentence's label and its three class probabilities (SUPPORT, CONTRADICT, NEI)."""

    sentence: str
    label: str
    support: float
    contradict: float
    nei: float

    @property
    def strength(self) -> float:
        """Probability of the predicted label."""
        return {"SUPPORT": self.support, "CONTRADICT": self.contradict, "NEI": self.nei}[self.label]

    @property
    def evidence(self) -> float:
        """P(the sentence is a finding bearing on the claim) = 1 − P(NEI)."""
        return 1.0 - self.nei

    def direction(self, label: str) -> float:
        """P(`label` | the sentence is evidence): how clearly it points that way, in [0, 1]."""
        p = self.support if label == "SUPPORT" else self.contradict
        return p / (self.support + self.contradict) if self.support + self.contradict > 0 else 0.0


def stance_of(
    prediction: SentencePrediction, claim: str = "", label: str | None = None
) -> tuple[PassageStance, float, tuple[str, ...]]:
    """The passage stance, its strength and the conditions it rests on, for one sentence judged
    against `claim`. `label` overrides the sentence's own most probable label (an abstract-level
    decision that made the sentence its abstract's rationale). Whether a sentence is evidence at
    all is the evidence threshold's call, made before; its strength is how clearly it points its
    way (`SentencePrediction.direction`)."""
    label = label or prediction.label
    if label == "NEI":
        return PassageStance.UNRELATED, prediction.nei, ()
    if label == "CONTRADICT":
        return PassageStance.CONTRADICTS, prediction.direction(label), ()
    if claim and null_result(prediction.sentence, claim):
        return (
            PassageStance.UNRELATED,
            prediction.nei,
            (),
        )  # a trend, not an effect: no support for a claimed effect
    conditions = (
        tuple(str(c) for c in stated_conditions(prediction.sentence, claim)) if claim else ()
    )
    return (
        (PassageStance.QUALIFIES if conditions else PassageStance.SUPPORTS),
        prediction.direction(label),
        conditions,
    )


def label_passages(
    predictions: list[SentencePrediction],
    source_id: str,
    statement: int = 0,
    claim: str = "",
    label: str | None = None,
) -> list[LabelledPassage]:
    """Labelled passages of one source for `verdict.decide_verdict`."""
    out = []
    for p in predictions:
        stance, strength, conditions = stance_of(p, claim, label)
        side = label or p.label
        probability = (
            p.support if side == "SUPPORT" else p.contradict if side == "CONTRADICT" else None
        )
        out.append(
            LabelledPassage(
                source_id,
                stance,
                round(strength, 4),
                statement,
                p.sentence,
                conditions,
                probability=None if probability is None else round(probability, 4),
            )
        )
    return out
