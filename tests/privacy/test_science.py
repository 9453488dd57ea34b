"""Scientific notation is not a person (issue 36): one test per class of `research_privacy.science`.

Each case is text the de-identifier once altered (Greek letters read as a foreign-script name,
"1,000" cut into "1,[MRN_1]", a compound code read as a record number, "West Nile" as a name,
"Type 1 Diabetes" as an address); each class also keeps catching the identifier it resembles.
"""

from __future__ import annotations

import pytest

from research_privacy import deidentify, find_identifiers
from research_privacy.boundary import person_text

pytestmark = pytest.mark.unit


def unchanged(text: str) -> None:
    assert find_identifiers(text) == [], [(i.category, i.value) for i in find_identifiers(text)]
    assert person_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "IFN-γ release assays in latent tuberculosis",
        "TNF-α blockade",
        "β-blockers after myocardial infarction",
        "integrin αvβ8 activates latent TGF-β",
        "NF-κB signalling in macrophages",
        "amyloid-β oligomers",
        "Bacteriophages MS2 and Qβ are members of the Leviviridae.",
        "CD4 count 180 cells/µL",
        "γδ T cells",
        "Retinoic acid receptor-related orphan receptor gamma (RORγ) is a target.",
        "Taking 400mg of α-tocopheryl acetate",
    ],
)
def test_greek_letters_in_names_are_notation(text: str) -> None:
    unchanged(text)


def test_a_greek_word_is_still_a_name() -> None:
    assert "Παπαδόπουλος" not in person_text("Does metformin help my patient Παπαδόπουλος?")


@pytest.mark.parametrize(
    "text",
    [
        "1,000 patients were randomised",
        "Approximately 250,000 people are infected.",
        "p < .001 for the interaction",
        "hazard ratio 0.74 (95% CI, 0.65 to 0.85)",
        "The ratio was 3249.42 dollars.",
        "time in range (p=0·0034)",
        "a cohort of 12,500 adults",
    ],
)
def test_numbers_with_separators_decimals_and_p_values(text: str) -> None:
    unchanged(text)


@pytest.mark.parametrize(
    "text",
    [
        "C2 works synergistically with A-769662 to activate AMPK.",
        "Addition of CHIR99021 and SU504 to fibroblasts",
        "Arp2/3 inhibition with CK-666",
        "the BNT162b2 mRNA vaccine",
        "mRNA-1273 in adolescents",
        "HEK293T cells",
        "MCF-7 and MDA-MB-231 breast cancer lines",
        "T2N0M0 breast cancer",
        "Therapeutic doses of PD 0332991 in tumours",
        "The origin of the CRF01_1b2k protein",
        "Reducing H3k4me3 methylation",
    ],
)
def test_compound_vaccine_and_cell_line_codes(text: str) -> None:
    unchanged(text)


def test_a_code_shape_in_a_patients_text_is_their_record_number() -> None:
    assert "K9X4421" not in person_text("My patient, hospital no. K9X4421, asks about CHIR99021.")
    assert "BNT162b2" in person_text("My patient, MRN 00482913, had a BNT162b2 booster.")


@pytest.mark.parametrize(
    "text",
    [
        "ICD-10 E11.9 type 2 diabetes",
        "ICD-10-CM code I48.91",
        "ATC code C09AA05",
        "SNOMED CT 44054006",
        "LOINC 4548-4 haemoglobin A1c",
        "MeSH term D003924",
        "PMID 31535829",
        "PMCID PMC6767390",
        "doi:10.1056/NEJMoa2034577",
        "https://doi.org/10.1016/S0140-6736(20)30183-5",
        "registered as NCT04368728",
        "ISRCTN12345678 trial registration",
        "EudraCT 2020-001038-36",
        "(MAD; OMIM 248370)",
    ],
)
def test_coding_systems_with_their_codes(text: str) -> None:
    unchanged(text)


@pytest.mark.parametrize(
    "text",
    [
        "the SARS-CoV-2 Omicron BA.2 neutralisation",
        "Delta variant B.1.617.2",
        "E. coli O157:H7",
        "HLA-B*57:01 screening before abacavir",
        "CYP2C19*2 loss-of-function allele",
    ],
)
def test_variants_serotypes_and_alleles(text: str) -> None:
    unchanged(text)


@pytest.mark.parametrize(
    "text",
    [
        "autoimmune diseases such as Type 1 Diabetes.",
        "Glasgow Coma Scale 8",
        "DMS3 protein enables Pol V transcription.",
        "Stage IIIA non-small cell lung cancer",
        "NYHA class III heart failure",
    ],
)
def test_numbered_terms(text: str) -> None:
    unchanged(text)


@pytest.mark.parametrize(
    "text",
    [
        "Rsad2 inhibits West Nile virus replication.",
        "influenza in Hong Kong",
        "HIV incidence in a San Francisco cohort",
        "Ebola virus disease in Sierra Leone",
        "Mann Whitney test for skewed data",
        "Johns Hopkins Hospital",
        "UK Biobank participants",
        "Kaplan-Meier survival curves",
        "Brigham and Women's Hospital",
        "Rio de Janeiro",
        "studies from the U.S. and Poland",
        "Lanzhou, China",
        "Rocky Mountain spotted fever",
        "the Framingham Heart Study",
    ],
)
def test_places_institutions_cohorts_and_eponyms_of_research(text: str) -> None:
    unchanged(text)


def test_words_that_spell_places_are_still_a_name_together() -> None:
    assert "Jordan Washington" not in person_text("Jordan Washington was admitted with chest pain.")


@pytest.mark.parametrize(
    "text",
    [
        "METHODS Between January 2000 and June 2003, 306 women were enrolled.",
        "followed until June 2012",
        "More than 100 years after the discovery of the bacillus",
        "Pfam is available via servers in the UK (http://pfam.sanger.ac.uk/).",
    ],
)
def test_a_studys_dates_ages_and_sites_in_text_about_no_one(text: str) -> None:
    unchanged(text)


def test_dates_and_ages_about_a_person_are_still_identifiers() -> None:
    out = person_text("Enrolled in 2019; surgery on 12 June 2019; follow-up in July 2020.")
    assert "12 June 2019" not in out and "July 2020" not in out and "2019;" in out
    assert "93" not in person_text("Is apixaban safe for a 93-year-old with eGFR 38?")


@pytest.mark.parametrize(
    "uuid",
    [
        "d4fd681a-0242-4616-8c1e-52b1d0e7a9f3",
        "31415926-5358-4979-a323-846264338327",
        "a19dec20-7f3e-4c1b-9d2a-1f0e5b6c7d8e",
    ],
)
def test_ids_that_name_no_one(uuid: str) -> None:
    unchanged(f"source list {uuid} rebuilt; digest sha256:9f86d081884c7d65")


def test_never_part_of_a_word() -> None:
    found = find_identifiers("Patient Radka Novotná asks about mRNA-1273.")
    assert [(i.category, i.value) for i in found] == [
        ("NAME", "Radka Novotná")
    ]  # not "Radka Novotn" + "á"
    assert (
        deidentify("mRNA-1273 in adolescents").text == "mRNA-1273 in adolescents"
    )  # not "mRN[MRN_1]"
