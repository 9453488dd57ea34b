"""The direction lexicon: which way a claim and a sentence point, and a claim's turned twin."""

from __future__ import annotations

import pytest

from research_verification.direction import conflict, directions, flip

pytestmark = pytest.mark.unit


def test_destabilise_against_a_stabilising_compound_is_a_conflict() -> None:
    claim = "Pyridostatin destabilizes the G-quadruplex in the telomeric region."
    quote = "Treatment with the G4-stabilizing compound pyridostatin (PDS) increases telomere fragility."
    assert directions(claim) == {"stability": {-1}}
    assert conflict(claim, quote) == "stability"


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("Aspirin reduces the risk of stroke.", "Aspirin increased the incidence of stroke."),
        ("Statins lower LDL cholesterol.", "LDL cholesterol was higher in the statin arm."),
        ("Metformin inhibits mTOR signalling.", "Metformin activated mTOR in hepatocytes."),
        ("Exercise improves cognition in older adults.", "Cognition worsened after the programme."),
        ("IL-6 is upregulated in sepsis.", "IL-6 was downregulated in septic patients."),
    ],
)
def test_opposite_poles_of_one_family_conflict(claim: str, sentence: str) -> None:
    assert conflict(claim, sentence) is not None


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("Aspirin reduces the risk of stroke.", "Aspirin reduced stroke by 20 %."),
        ("Aspirin reduces the risk of stroke.", "The trial enrolled 4,000 adults."),
        # a sentence that says both ways says nothing clear about the claim's direction
        ("Aspirin reduces stroke.", "Aspirin reduced stroke but increased bleeding."),
        # "lower limb" and "more than" are not directions
        ("Statins lower LDL cholesterol.", "Lower limb pain was reported by more than 10 %."),
    ],
)
def test_agreement_or_no_shared_direction_is_no_conflict(claim: str, sentence: str) -> None:
    assert conflict(claim, sentence) is None


@pytest.mark.parametrize(
    ("claim", "twin"),
    [
        (
            "Pyridostatin destabilizes the G-quadruplex in the telomeric region.",
            "Pyridostatin stabilizes the G-quadruplex in the telomeric region.",
        ),
        ("Aspirin reduced stroke risk.", "Aspirin increased stroke risk."),
        ("Higher fitness is linked to survival.", "Lower fitness is linked to survival."),
        ("Metformin activates AMPK.", "Metformin inhibits AMPK."),
    ],
)
def test_flip_turns_the_first_direction_word_and_keeps_its_ending(claim: str, twin: str) -> None:
    assert flip(claim) == twin
    assert conflict(claim, twin) is not None


def test_a_claim_without_a_direction_word_has_no_flip() -> None:
    assert flip("BRCA1 is a tumour suppressor gene.") is None
    assert directions("BRCA1 is a tumour suppressor gene.") == {}


def test_less_of_a_desirable_outcome_conflicts_with_a_quote_saying_it_improved() -> None:
    quote = (
        "After 3 months, there were no further significant changes in KCCQ score for either group,"
        " resulting in a sustained, greater improvement overall for the exercise group (P < .001)."
    )
    turned = "Exercise training decreases quality of life in patients with chronic heart failure."
    assert conflict(turned, quote) == "outcome"
    assert conflict(flip(turned) or "", quote) is None  # "increases quality of life" agrees
    assert (
        conflict("Statins reduce mortality in older adults.", "Statins improved outcomes.") is None
    )
