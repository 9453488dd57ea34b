"""A paper's design and size read from its abstract's words (`research_gateway.study`), as the run
page shows them per finding."""

from __future__ import annotations

import pytest

from research_gateway.study import design_of, size_of, study_of

pytestmark = pytest.mark.unit

HF_ACTION = (
    "DESIGN, SETTING, AND PATIENTS Multicenter, randomized controlled trial among 2331 medically "
    "stable outpatients with heart failure. Patients were randomized from April 2003 through "
    "February 2007. INTERVENTIONS Usual care plus aerobic exercise training (n = 1172)."
)


@pytest.mark.parametrize(
    ("abstract", "study"),
    [
        (
            "We randomly assigned 19,114 adults aged 70 years or older to aspirin or placebo.",
            "randomised trial, 19,114 adults",
        ),
        (HF_ACTION, "randomised trial, 2,331 outpatients"),  # the whole, not the arm (n = 1172)
        (
            "A meta-analysis of 12 randomised trials including 45 000 patients.",
            "meta-analysis, 45,000 patients",
        ),
        (
            "In 2010 patients were enrolled in a prospective cohort of 512 women.",
            "cohort study, 512 women",
        ),  # "In 2010 patients": a year
        ("A non-randomized comparison in 40 children.", "40 children"),
        ("Knockout mice lacking the receptor gained weight.", "animal study"),
        ("A case-control study of 300 smokers.", "case-control study, 300 smokers"),
        ("Gene expression was measured in cell lines.", ""),
        ("", ""),
    ],
)
def test_the_design_and_size_an_abstract_states(abstract: str, study: str) -> None:
    assert study_of(abstract) == study


def test_design_and_size_are_read_apart() -> None:
    assert design_of(HF_ACTION) == "randomised trial"
    assert size_of(HF_ACTION) == "2,331 outpatients"
    assert size_of("One patient was seen.") == ""  # no count of people
    assert design_of("12 volunteers took part.") == ""
