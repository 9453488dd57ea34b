"""What a report states of a quoted abstract sentence: no section label, no extraction note; the quote stays verbatim."""

from __future__ import annotations

import pytest

from research_reports.text import found_verbatim, statement_of

pytestmark = pytest.mark.unit

TRUNCATED = (
    "Exercise training significantly enhanced the inhibitory influence of cardiac afferents on R and M "
    "regional vascular resistance.(ABSTRACT TRUNCATED AT 250 WORDS)"
)


def test_the_extraction_note_and_section_labels_are_not_stated() -> None:
    assert statement_of(TRUNCATED).endswith("regional vascular resistance.")
    assert (
        statement_of(
            "DESIGN, SETTING, AND PATIENTS Multicenter, randomized controlled trial of 2331 patients."
        )
        == "Multicenter, randomized controlled trial of 2331 patients."
    )
    assert (
        statement_of("CONCLUSIONS Exercise training conferred modest improvements.")
        == "Exercise training conferred modest improvements."
    )
    assert (
        statement_of("HbA1c fell by 1.1% with metformin.") == "HbA1c fell by 1.1% with metformin."
    )  # nothing to drop


def test_the_statement_is_still_found_in_its_source() -> None:
    assert found_verbatim(statement_of(TRUNCATED), TRUNCATED)


def test_a_connective_pointing_at_the_sentence_before_is_not_stated() -> None:
    # the demo review's finding began "Indeed, during NETosis, …" — a reader has no sentence before it
    quoted = (
        "Indeed, during NETosis, neutrophils externalized the citrullinated autoantigens implicated in RA "
        "pathogenesis."
    )
    assert statement_of(quoted) == (
        "During NETosis, neutrophils externalized the citrullinated autoantigens implicated "
        "in RA pathogenesis."
    )
    assert statement_of("RESULTS Moreover, the drug lowered HbA1c.") == "The drug lowered HbA1c."
    assert (
        statement_of("However the drug lowered HbA1c.") == "However the drug lowered HbA1c."
    )  # no comma: part of it
    assert found_verbatim(statement_of(quoted), quoted)
