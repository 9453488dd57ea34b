"""Names as records write them: in capitals, inverted, after a newborn's label, split by an
invisible character — caught; and capitals that are science — kept. A name is caught only when
no word of it is left ("MRS [NAME_1]" is fine, "VAN DER [NAME_1]" is a miss)."""

from __future__ import annotations

import re

import pytest

from research_privacy import deidentify, find_identifiers
from research_privacy.boundary import person_text, require_clean

pytestmark = pytest.mark.unit


def gone(text: str, *identifiers: str) -> str:
    out = person_text(text)
    for identifier in identifiers:
        assert identifier not in out, (identifier, out)
        for word in re.findall(r"\w\w+", identifier):
            assert not re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", out), (word, out)
    assert require_clean(out, what="test") == out
    return out


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("JANE ROE has type 2 diabetes; is metformin enough?", "JANE ROE"),
        ("KOWALCZYK was admitted on 3 May with HIV.", "KOWALCZYK"),
        ("DLAMINI presented with chest pain.", "DLAMINI"),
        ("KOWALCZYK WAS ADMITTED WITH COPD.", "KOWALCZYK"),
        ("PIETER VAN DER BERG has COPD and a TNF inhibitor.", "PIETER VAN DER BERG"),
        ("JUAN DE LA FUENTE-ORTEGA has AF.", "JUAN DE LA FUENTE-ORTEGA"),
        ("SMITH-JONES was readmitted with sepsis.", "SMITH-JONES"),
        ("For INGRID (MRN 00482913), is apixaban safe?", "INGRID"),
        ("EMRE KORKMAZ — COPD. SEEN ON 9 OCTOBER. IS DOSE REDUCTION NEEDED?", "EMRE KORKMAZ"),
    ],
)
def test_names_in_capitals(text: str, name: str) -> None:
    gone(text, name)


def test_a_date_in_capitals() -> None:
    gone("EMRE KORKMAZ — COPD. SEEN ON 9 OCTOBER.", "9 OCTOBER")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Discharge summary for ROE, JANE: COPD exacerbation.", "ROE, JANE"),
        ("ROE, JANE has COPD; is a LAMA enough?", "ROE, JANE"),  # a listed given name
        ("Discharge summary for MAMANI, WAYRA: HFpEF.", "MAMANI, WAYRA"),  # unlisted: the label
        ("Clinic letter for Mamani, Wayra: HFpEF.", "Mamani, Wayra"),
        ("Re: MACCARTHY, SAOIRSE, DOB May 18 1962; HIV.", "MACCARTHY, SAOIRSE"),
        ("MCALLISTER, Eilidh (MRN 00247353) — a β-blocker?", "MCALLISTER, Eilidh"),
        ("VAN DER BERG, PIETER, DOB 15/12/1963: ARDS.", "VAN DER BERG, PIETER"),
    ],
)
def test_inverted_names_in_any_case(text: str, name: str) -> None:
    gone(text, name)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Baby girl Maria, bilirubin 250 µmol/L on day 3.", "Maria"),
        ("Baby boy Kowalczyk, on phototherapy.", "Kowalczyk"),
        ("BABY GIRL KJÆRGAARD, Apgar 6 at 5 minutes.", "KJÆRGAARD"),
        ("baby boy Tomasz, feeding poorly.", "Tomasz"),
        ("Infant of NIAMH NÍ DHOMHNAILL, on CPAP.", "NIAMH NÍ DHOMHNAILL"),
    ],
)
def test_names_after_a_newborns_label(text: str, name: str) -> None:
    gone(text, name)


@pytest.mark.parametrize("invisible", ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_names_split_by_an_invisible_character(invisible: str) -> None:
    gone(f"Jane Ro{invisible}e has COPD; is tiotropium enough?", f"Jane Ro{invisible}e")
    gone(f"Does Priy{invisible}anka's eGFR of 38 change the dose?", f"Priy{invisible}anka")
    gone(f"Mrs Kowal{invisible}czyk was admitted with sepsis.", f"Kowal{invisible}czyk")


def test_an_invisible_character_moves_no_replacement() -> None:
    """Spans are of the text as typed: the name goes whole, what is around it stays as it was."""
    text = "COPD\u200b in Jane Ro\u00ade, DOB 03/04/1950, and HIV\ufeff."
    out = deidentify(text)
    assert out.text == "COPD\u200b in [NAME_1], DOB [DATE_1], and HIV\ufeff."
    assert ("NAME", "Jane Roe") in out.found
    spans = [(f.category, text[f.start : f.end]) for f in find_identifiers(text)]
    assert spans == [("NAME", "Jane Ro\u00ade"), ("DATE", "03/04/1950")]
    assert out.reidentify(out.text) == "COPD\u200b in Jane Roe, DOB 03/04/1950, and HIV\ufeff."


@pytest.mark.parametrize(
    "text",
    [
        "Does COPD with HIV change the TNF inhibitor choice in BRCA1 carriers?",
        "Is SARS-CoV-2 in ICD-10 E11.9 patients covered by RECOVERY?",
        "HF-ACTION, SPRINT and RECOVERY: what do they say about exercise?",
        "RESULTS: In SPRINT MIND, intensive BP control reduced MCI.",
        "My patient has COPD and ARDS; would RECOVERY apply?",
        "Our patient with BRCA1, a DOAC and HIV.",
        "The patient had MODY, LADA and DKA.",
        "The GRACE score and the WELLS score in a patient with HIV.",
        "MS patients and DR grading in ALLHAT, ACCORD and UKPDS",
        "Evidence from cells, mice and humans on a TNF inhibitor.",
        "Cells, Mice and Humans: TNF in COPD",
        "Infant of diabetic mother with RDS on CPAP.",
        "Baby girl with TTN on phototherapy.",
    ],
)
def test_capitals_that_are_science_stay(text: str) -> None:
    assert person_text(text) == text
