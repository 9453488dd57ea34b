"""The shipped passage classifier: small, offline, and it reads direction and negation."""

from __future__ import annotations

import numpy as np
import pytest

from research_verification import LABELS, abstract_label, get_classifier
from research_verification.classifier import WEIGHTS
from research_verification.lexical import direction, lexical_features

pytestmark = pytest.mark.unit

VISION = [
    "OBJECTIVE To assess whether population screening for impaired vision among older people in the community leads to improvements in vision.",
    "The inclusion of a visual screening component in the assessment did not result in improvements in self reported visual problems (pooled odds ratio 1.04:95% confidence interval 0.89 to 1.22).",
    "CONCLUSIONS Screening of asymptomatic older people in the community is not justified on present evidence.",
]


def test_weights_ship_small_with_their_licence():
    assert WEIGHTS.exists() and WEIGHTS.stat().st_size < 5_000_000
    licence = (WEIGHTS.parent / "LICENSE.md").read_text()
    assert "CC BY-NC 2.0" in licence and "Wadden" in licence


def test_probabilities_are_distributions_in_label_order():
    probs = get_classifier().predict_proba("Aspirin reduces stroke risk.", ["Aspirin lowered stroke incidence by 20%.", "The sky is blue."])
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert LABELS == ("SUPPORT", "CONTRADICT", "NEI")
    assert probs[1, 2] > probs[0, 2]  # an unrelated sentence is more NEI than a relevant one


def test_a_null_result_contradicts_a_claimed_improvement():
    claim = "Asymptomatic visual impairment screening in elderly populations leads to improved vision."
    probs = get_classifier().predict_proba(claim, VISION)
    label = abstract_label(probs, get_classifier().thresholds)
    assert label.label == "CONTRADICT"
    assert 1 in label.rationale_indices  # the null-result sentence, not the objective


def test_reversing_the_claimed_direction_moves_probability_to_contradict():
    sentence = "Exercise training conferred statistically significant improvements in self-reported health status compared with usual care."
    up, down = get_classifier().predict_proba("Exercise training improves quality of life.", [sentence])[0], \
        get_classifier().predict_proba("Exercise training worsens quality of life.", [sentence])[0]
    assert up[0] > up[1] and down[1] > up[1]


def test_direction_and_negation_cues():
    assert direction("Aspirin reduced mortality") == -1
    assert direction("Aspirin did not increase mortality") == -1
    assert direction("CRP levels were elevated") == 1
    assert direction("The sky is blue") == 0
    row = lexical_features("X increases Y", "X decreased Y in 40 patients")
    assert row[8] == 1.0  # dir_mismatch


def test_an_empty_abstract_is_not_enough_info():
    assert abstract_label(np.zeros((0, 3))).label == "NEI"
