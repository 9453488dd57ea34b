"""Synthetic patients from many cultures never reach a search query or a remote prompt, and a
plain scientific question still produces a useful query (allow-list outbound builder)."""

from __future__ import annotations

import unicodedata

import pytest

from research_connector.phi import find_identifiers as connector_refusal
from research_privacy import outbound_query, outbound_text
from research_privacy.probes import CLASSES, leaked_tokens, probe_set
from research_researcher import prepare

pytestmark = pytest.mark.unit

PROBES = probe_set(seed=16, size=240)


@pytest.fixture(scope="module")
def guarded() -> list[prepare.GuardedQuestion]:
    return [prepare.guard_question(p.question, p.patient_ref) for p in PROBES]


def _scripts(text: str) -> set[str]:
    return {unicodedata.name(c, "?").split()[0] for c in text if c.isalpha()}


def test_the_probe_set_is_deterministic_and_spans_many_scripts() -> None:
    assert len(PROBES) >= 200
    assert [p.question for p in probe_set(seed=16, size=240)] == [p.question for p in PROBES]
    scripts = set().union(*(_scripts(p.values["name"]) for p in PROBES))
    assert {
        "LATIN",
        "CYRILLIC",
        "GREEK",
        "ARABIC",
        "HEBREW",
        "DEVANAGARI",
        "CJK",
        "HANGUL",
        "THAI",
    } <= scripts
    assert len({p.locale for p in PROBES}) >= 30


def test_no_probe_value_reaches_the_query_a_connector_receives(
    guarded: list[prepare.GuardedQuestion],
) -> None:
    leaks = []
    for probe, guard in zip(PROBES, guarded, strict=True):
        for cls in CLASSES:
            for text in (guard.topic_query, outbound_query(probe.question)):
                leaks += [
                    (probe.locale, cls, token) for token in leaked_tokens(probe.values[cls], text)
                ]
    assert leaks == []


def test_no_probe_value_reaches_the_text_a_remote_model_reads(
    guarded: list[prepare.GuardedQuestion],
) -> None:
    leaks = []
    for probe, guard in zip(PROBES, guarded, strict=True):
        for cls in CLASSES:
            leaks += [
                (probe.locale, cls, t)
                for t in leaked_tokens(probe.values[cls], guard.model_question)
            ]
    assert leaks == []


def test_the_connector_refuses_every_raw_probe_question() -> None:
    assert [p.question for p in PROBES if not connector_refusal(p.question)] == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Does vitamin D supplementation reduce fracture risk in elderly women?",
            "Does vitamin D supplementation reduce fracture risk in elderly women?",
        ),
        (
            "Is IL-6 associated with COVID-19 severity and p53 expression?",
            "Is IL-6 associated with COVID-19 severity and p53 expression?",
        ),
        (
            "Parkinson's disease: does deep brain stimulation improve gait?",
            "Parkinson's disease does deep brain stimulation improve gait?",
        ),
        (
            "Does tirzepatide lower HbA1c more than semaglutide in type 2 diabetes?",
            "Does tirzepatide lower HbA1c more than semaglutide in type 2 diabetes?",
        ),
    ],
)
def test_a_scientific_question_keeps_its_science(question: str, expected: str) -> None:
    assert outbound_query(question) == expected
    assert prepare.guard_question(question).topic_query == expected


def test_unknown_words_around_a_patient_are_dropped_whatever_their_origin() -> None:
    query = outbound_query(
        "Does denosumab help my patient Ngozi Okonkwo-Adeyemi of Plot 14 Adeola Odeku, Victoria Island, "
        "or Frau Žofie Dvořáková (Иванова), with osteoporosis?"
    )
    assert query.startswith("Does denosumab help") and query.endswith("osteoporosis?")
    for value in (
        "Ngozi",
        "Okonkwo",
        "Adeyemi",
        "Plot",
        "14",
        "Adeola",
        "Odeku",
        "Victoria",
        "Island",
        "Žofie",
        "Dvořáková",
        "Иванова",
    ):
        assert value not in query


def test_remote_prose_keeps_clinical_words_and_hides_the_rest() -> None:
    result = outbound_text(
        "Mrs Kwabena Asante-Mensah, 72-year-old with type 2 diabetes, lives in Kumasi Zongo."
    )
    assert "72-year-old" in result.text and "type 2 diabetes" in result.text
    for value in ("Kwabena", "Asante", "Mensah", "Kumasi", "Zongo"):
        assert value not in result.text
    assert result.reidentify(result.text).startswith("Mrs Kwabena Asante-Mensah")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is Aspirin protective?", "Is Aspirin protective?"),
        (
            "Does Metformin use lower Colorectal cancer risk?",
            "Does Metformin use lower Colorectal cancer risk?",
        ),
        # The same words, capitalised where a name or a place would be, do not leave.
        ("Is aspirin protective for Rose Young?", "Is aspirin protective?"),
        ("Is aspirin protective for Baker?", "Is aspirin protective?"),
        ("Is aspirin given at Reading General Hospital?", "Is aspirin given?"),
    ],
)
def test_a_known_term_capitalised_inside_a_sentence_leaves_but_an_unknown_capital_does_not(
    question: str, expected: str
) -> None:
    assert outbound_query(question) == expected
    assert prepare.guard_question(question).topic_query == expected
    assert ("Aspirin" in outbound_text(question).text) == ("Aspirin" in question)
