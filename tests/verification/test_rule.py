"""The verdict rule of one abstract (`decide_paper`): abstain when unsure, and say why."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from research_verification.evidence import Rule, decide_paper

pytestmark = pytest.mark.unit

CLAIM = "Pyridostatin destabilizes the G-quadruplex in the telomeric region."
SENTENCES = [
    "Telomeres are repetitive sequences at chromosome ends.",
    "Treatment with the G4-stabilizing compound pyridostatin (PDS) increases telomere fragility.",
]
RATIONALE = np.array([0.1, 0.9], dtype=np.float32)
ABOUT = np.array([0.05, 0.8], dtype=np.float32)  # sentence-level P(evidence)
NAMES = [False, True]
RULE = Rule(
    evidence=0.5, best_evidence=0.5, support_bar=0.8, contradict_bar=0.5, sentence_floor=0.3
)


def call(
    probs, rule=RULE, sentence_evidence=ABOUT, claim="Pyridostatin increases telomere fragility."
):
    return decide_paper(claim, SENTENCES, probs, RATIONALE, sentence_evidence, NAMES, rule)


def test_a_sure_supporting_abstract_counts_with_its_best_quote() -> None:
    decided = call([0.9, 0.05, 0.05])
    assert (decided.label, decided.chosen[0]) == ("SUPPORT", 1)
    assert decided.strength == pytest.approx(0.9)


def test_support_under_its_bar_does_not_count_and_says_which_bar() -> None:
    decided = call([0.7, 0.1, 0.2])
    assert decided.label == "NEI"
    assert (decided.leaning, decided.bar) == ("SUPPORT", 0.8)
    assert decided.probability == pytest.approx(0.7)
    assert "0.70 under the bar 0.80" in decided.reason


def test_a_quote_not_about_the_claim_does_not_count() -> None:
    decided = call([0.95, 0.03, 0.02], sentence_evidence=np.array([0.05, 0.1], dtype=np.float32))
    assert decided.label == "NEI" and decided.leaning == "SUPPORT"
    assert "not about the claim" in decided.reason


def test_contradiction_has_its_own_bar() -> None:
    assert call([0.3, 0.6, 0.1]).label == "CONTRADICT"
    assert call([0.35, 0.45, 0.2]).label == "NEI"


def test_an_abstract_without_evidence_is_nei_without_leaning() -> None:
    decided = call([0.2, 0.1, 0.7])
    assert decided.label == "NEI" and decided.leaning == ""


def test_direction_words_against_the_claim_flip_or_abstain() -> None:
    probs = [0.9, 0.05, 0.05]  # the model reads "stabilizing" as support for "destabilizes"
    assert call(probs, claim=CLAIM).label == "SUPPORT"  # the check off
    flipped = call(probs, _with(direction="flip"), claim=CLAIM)
    assert (flipped.label, flipped.strength) == ("CONTRADICT", pytest.approx(0.9))
    held = call(probs, _with(direction="abstain"), claim=CLAIM)
    assert held.label == "NEI" and "stability words point the other way" in held.reason


def _with(**changes: Any) -> Rule:
    from dataclasses import replace

    return replace(RULE, **changes)


def test_the_rule_reads_its_thresholds_from_the_shipped_config() -> None:
    rule = Rule.of(
        {"evidence": 0.7, "best_evidence": 0.9, "support_bar": 0.85, "direction": "flip"}
    )
    assert rule.best_evidence == 0.7  # never above the floor of the others
    assert (rule.support_bar, rule.contradict_bar, rule.direction) == (0.85, 0.0, "flip")
