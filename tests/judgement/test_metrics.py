"""SciFact metrics, the abstract rule, calibration and the claim negation used in training."""

from __future__ import annotations

import numpy as np
import pytest

from research_judgement.metrics import (
    AbstractDecision,
    ScoredAbstract,
    abstract_decision,
    ece,
    fit_platt,
    fit_temperature,
    label_rationale_f1,
    rationale_f1,
    sigmoid,
    softmax,
)
from research_judgement.scifact import negate_claim, passage_text

pytestmark = pytest.mark.unit


def test_abstract_rule_picks_rationales_and_weighs_contradiction():
    probs = np.array([[0.1, 0.1, 0.8], [0.5, 0.4, 0.1], [0.3, 0.6, 0.1]])
    d = abstract_decision(probs, {"rationale": 0.5, "top_k": 2, "contradict_weight": 1.0})
    assert d.label == "CONTRADICT" and d.rationale_indices == (1, 2)
    assert (
        abstract_decision(probs, {"rationale": 0.95, "top_k": 2, "contradict_weight": 1.0}).label
        == "NEI"
    )
    assert abstract_decision(np.zeros((0, 3))).label == "NEI"


def test_rationale_f1_needs_whole_gold_sets():
    gold_sets = (frozenset({1, 2}), frozenset({4}))
    whole = ScoredAbstract("SUPPORT", gold_sets, AbstractDecision("SUPPORT", 0.9, (1, 2)))
    half = ScoredAbstract("SUPPORT", gold_sets, AbstractDecision("SUPPORT", 0.9, (1, 5)))
    assert rationale_f1([whole]) == pytest.approx(2 * (1.0 * 2 / 3) / (1.0 + 2 / 3))  # P 2/2, R 2/3
    assert rationale_f1([half]) == 0.0
    assert label_rationale_f1([whole]) == 1.0 and label_rationale_f1([half]) == 0.0
    wrong_label = ScoredAbstract("SUPPORT", gold_sets, AbstractDecision("CONTRADICT", 0.9, (1, 2)))
    assert label_rationale_f1([wrong_label]) == 0.0


def test_temperature_and_platt_calibrate_overconfident_scores():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 3000)
    logits = rng.normal(size=(3000, 3))
    logits[np.arange(3000), y] += 1.0
    logits *= 4.0  # overconfident
    t = fit_temperature(logits, y)
    assert t > 2.0
    assert ece(softmax(logits, t), y) < ece(softmax(logits), y)
    scores = rng.normal(size=2000)
    labels = (rng.random(2000) < sigmoid(0.5 * scores - 0.3)).astype(float)
    a, b = fit_platt(scores, labels)
    assert a == pytest.approx(0.5, abs=0.15) and b == pytest.approx(-0.3, abs=0.15)


def test_negation_flips_direction_or_inserts_not():
    assert negate_claim("Aspirin increases bleeding risk.") == "Aspirin decreases bleeding risk."
    assert (
        negate_claim("Statins are effective in older adults.")
        == "Statins are not effective in older adults."
    )
    assert negate_claim("Cats.") is None
    assert passage_text("  A  finding. ", "Title") == "Title: A finding."
    assert passage_text("A finding.") == "A finding."


def test_platt_fit_stays_finite_when_the_scores_separate_the_classes():
    # held-out logits of a well-trained model: wide, almost separable (the relevance model's case)
    rng = np.random.default_rng(1)
    scores = np.concatenate([rng.normal(-9, 3, 400), rng.normal(7, 3, 200)])
    labels = np.concatenate([np.zeros(400), np.ones(200)])
    labels[:5] = 1  # a few mistakes, as held-out data has
    a, b = fit_platt(scores, labels)
    assert np.isfinite([a, b]).all() and 0 < a < 5
    assert ece(sigmoid(a * scores + b), labels) < 0.05
