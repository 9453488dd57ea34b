"""A structured abstract's sections (`research_verification.sections`): background, aims and
methods are never read as findings; results and conclusions are, and so is an unstructured abstract."""

from __future__ import annotations

import pytest

from research_verification.sections import frames, reported, section

pytestmark = pytest.mark.unit

HF_ACTION = [  # the demo's HF-ACTION abstract, shortened
    "CONTEXT Findings from previous studies of the effects of exercise training on patient-reported health status have been inconsistent.",
    "OBJECTIVE To test the effects of exercise training on health status among patients with heart failure.",
    "DESIGN, SETTING, AND PATIENTS Multicenter, randomized controlled trial among 2331 medically stable outpatients.",
    "Patients were randomized from April 2003 through February 2007.",
    "RESULTS Median follow-up was 2.5 years.",
    "The additional 1.93-point increase in the exercise training group was statistically significant (P < .001).",
    "CONCLUSIONS Exercise training conferred modest but statistically significant improvements in self-reported health status.",
]


def test_framing_sections_are_left_out_and_their_unlabelled_sentences_with_them() -> None:
    assert (
        section(HF_ACTION[2]) == "DESIGN, SETTING, AND PATIENTS" and section(HF_ACTION[3]) is None
    )
    assert reported(HF_ACTION) == HF_ACTION[4:]
    assert (
        frames("METHODS")
        and frames("BACKGROUND")
        and not frames("METHODS AND RESULTS")
        and not frames(None)
    )
    mixed = [
        "METHODS AND RESULTS Training lowered mortality by 11% in 2331 patients.",
        "It was safe.",
    ]
    assert reported(mixed) == mixed
    plain = ["Exercise training improved health status.", "It was safe in older patients."]
    assert reported(plain) == plain  # no labels, nothing to leave out


def test_a_review_or_commentary_is_told_from_a_study() -> None:
    from research_verification.sections import reviews_others

    assert reviews_others(
        [
            "NETs were discovered in 2004.",
            "Here, we critically evaluate the evidence supporting NETs.",
        ]
    )
    assert reviews_others(["This review summarises the trials of statins in the elderly."])
    assert not reviews_others(
        ["We randomised 400 adults.", "Exercise training improved KCCQ scores (P < .001)."]
    )
