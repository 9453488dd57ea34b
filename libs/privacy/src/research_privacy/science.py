"""What biomedical text is made of: spans no identifier rule may take for a person's.

`protected_spans(text)` lists the stretches of a text that are scientific notation, by explicit
rules, each with its unit test (tests/privacy/test_science.py):

- Greek letters inside names (IFN-γ, TNF-α, NF-κB, αvβ8, amyloid-β, β-blockers, Qβ, µg) —
  `greek_notation` (module `greek`, also used by the allow-list);
- numbers: thousands separators (1,000; 12,500), p-values and leading-dot decimals (p < .001);
- coding systems with their code: ICD-9/10/11(-CM), ATC, SNOMED CT, LOINC, MeSH, PMID, PMCID,
  DOI (bare or as a doi.org link), NCT, ISRCTN, EudraCT, ACTRN, DRKS, ChiCTR, CTRI, UMIN, PROSPERO,
  OMIM, CAS, dbSNP rs ids, GEO / SRA accessions;
- compound, drug, vaccine and cell-line codes (BNT162b2, mRNA-1273, CHIR99021, A-769662,
  MDA-MB-231): a letters-and-digits token with a lowercase letter always; a capitalised code
  shape (letters, optional hyphen, digits) only where the text says nothing of a person (no
  patient cue, title, date of birth or record label) — there the same shape is a record number;
- variant lineages, serotypes and alleles (BA.2, B.1.617.2, O157:H7, HLA-B*57:01, CYP2C19*2);
- a numbered term (Type 1, Stage IIIA, Class II, Pol V, Scale 8, Phase 3);
- proper nouns that are not people: countries, US states, and the places, institutions, cohorts,
  trials, statistical eponyms and place-named pathogens of `data/research_proper_nouns.txt`
  (West Nile, Hong Kong, Sierra Leone, Johns Hopkins, Mann Whitney, UK Biobank) — as whole runs
  of capitalised words, so "Jordan Washington" (two words that spell people too) stays a name;
- ids that name no one: UUIDs and hex digests.

A rule takes an identifier out only when the identifier lies wholly inside these spans: an
address that holds "New York" ("12 New York Avenue, Apt 3") is wider, and stays an address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from research_privacy.greek import greek_notation
from research_privacy.vocabulary import person_names

_UUID = r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
_DIGEST = r"\b(?:sha(?:1|256|512)?:)?(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{16,}\b"
_NUMBERS = (
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,]*\d)"  # 1,000  12,500.5
    r"|\b[pP]\s*[<>=≤≥]\s*0?[.·]\d+"  # p < .001
    r"|(?<![\w.])\.\d+\b"  # .05
    r"|(?<![\w.·])\d+[.·]\d+(?![.·]?\d)"  # 3249.42, 0·0034 (one decimal point: never a date or a phone)
)
# Only where the text is about no one: then these are quantities, ranges and codes.
_RESEARCH_NUMBERS = re.compile(
    r"(?<![\w.\-/])[1-9]\d{0,6}(?![\w.\-/]*\d)"  # a count: 1836287 patients, OMIM 608612
    r"|(?<![\w.\-/])\d+(?:\.\d+)?\s?[-–]\s?\d+(?:\.\d+)?(?![\w.\-/]*\d)"  # a range: 943-949, 1989-93, 1.85-133.01
    r"|\b[A-Z]{1,4}[-\s]0\d{4,8}\b"  # a compound by its sponsor's code: PD 0332991, PF-04449913
)
_CODES = (
    r"\bICD[-\s]?(?:9|10|11|O)(?:[-\s]?(?:CM|PCS|AM|GM|CA))?(?:\s+codes?)?\s*[:#]?\s*"
    r"[A-Z]\d[0-9A-Z](?:\.[0-9A-Z]{1,4})?(?:\s*[-–,/]\s*[A-Z]\d[0-9A-Z](?:\.[0-9A-Z]{1,4})?)*"
    r"|\bATC(?:\s+codes?)?\s*[:#]?\s*[A-Z]\d\d(?:[A-Z]{1,2}(?:\d\d)?)?"
    r"|\bSNOMED(?:[\s-]?CT)?(?:\s+(?:codes?|concepts?|ids?))?\s*[:#]?\s*\d{6,18}"
    r"|\bLOINC(?:\s+codes?)?\s*[:#]?\s*\d{1,7}-\d"
    r"|\bMeSH(?:\s+(?:terms?|ids?|headings?|codes?|descriptors?|UI))?\s*[:#]?\s*[DCQ]\d{6,9}"
    r"|\bPMID\s*[:#]?\s*\d{1,9}"
    r"|\bPMCID\s*[:#]?\s*PMC\d{3,9}|\bPMC\d{5,9}\b"
    r"|(?:\b(?:doi|DOI)\s*:?\s*|\bhttps?://(?:dx\.)?doi\.org/)?\b10\.\d{4,9}/[^\s\"<>]*[^\s\"<>.,;:)\]]"
    r"|\bNCT\s?\d{8}\b|\bISRCTN\s?\d{8}\b|\bACTRN\d{14}\b|\bDRKS\d{8}\b|\bChiCTR[-\w]{6,20}\b"
    r"|\bCTRI/\d{4}/\d{2,3}/\d{4,6}\b|\bUMIN\d{9}\b|\bCRD\d{11}\b|\bJPRN-\w{6,16}\b"
    r"|\bEudraCT(?:\s+(?:number|no\.?|#))?\s*[:#]?\s*\d{4}-\d{6}-\d{2}\b"
    r"|\b(?:OMIM|MIM)\s*[:#]?\s*\d{6}\b|\bCAS(?:\s+(?:RN|number|no\.?))?\s*[:#]?\s*\d{2,7}-\d{2}-\d\b"
    r"|\brs\d{3,12}\b|\b(?:GSE|GSM|GPL|SRR|SRP|SRX|PRJNA|ERR|ERP)\d{3,9}\b"
)
_VARIANTS = (
    r"\b[A-Z]{1,3}(?:\.\d{1,3}){1,4}(?:/\d{1,2})?\b"  # BA.2, B.1.617.2, BA.4/5
    r"|\b[OH]\d{1,3}:[HK]\d{1,2}\b"  # O157:H7
    r"|\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)?\*\d{1,3}(?::\d{2,3}){0,3}\b"  # HLA-B*57:01, CYP2C19*2
)
_NUMBERED_TERM = (
    r"\b(?:Type|Grade|Stage|Class|Phase|Group|Level|Tier|Category|Arm|Cohort|Study|Wave|Visit|Cycle|Day|Week|"
    r"Month|Year|Score|Scale|Step|Part|Table|Figure|Fig|Model|Trial|Experiment|Panel|Section|Chapter|Appendix|"
    r"Complex|Factor|Pol|Polymerase|Region|Segment|Domain|Loop|Helix|Exon|Intron|Chromosome|Zone|Area|Lead|"
    r"Criterion|Criteria|Question|Item|Hypothesis|Aim|Objective|Outcome|Version|Release|Round|Session|Trimester)"
    r"\.?\s+(?:\d{1,3}[a-z]?|[IVX]{1,5}[A-Ca-c]?|[A-H])\b"
)
# Compound, drug, vaccine and cell-line codes: lowercase inside a letters-and-digits token always
# (BNT162b2, mRNA-1273, H3K4me3, Ad26.COV2.S is caught by its "COV2" part below), the rest by shape.
_MIXED_CASE_CODE = (
    r"(?<![\w\-])(?=[\w\-.]*\d)(?=[\w\-.]*[a-z])(?=[\w\-.]*[A-Z])[A-Za-z0-9]+(?:[-._][A-Za-z0-9]+)*(?![\w\-])"
    r"|\b[cpy]?T[0-4xX](?:is|[a-d])?N[0-3xX][a-c]?M[01xX][a-c]?\b"  # TNM stage: T2N0M0
)
# A single letter and five or more digits (A7731902) stays a record number even here, and so do
# digits that open with 0 without a hyphen (VD054965): codes are A549, A-769662, LY294002, CHIR99021.
_CODE_SHAPE = re.compile(
    r"(?<![\w\-/])(?:[A-Z]{2,6}[1-9]\d{1,6}[A-Z]{0,3}|[A-Z]{1,6}-\d{2,7}[A-Z]{0,3}|[A-Z][1-9]\d{1,3}[A-Z]{0,2}|"
    r"[A-Z]{1,4}-[A-Z]{1,4}-\d{1,4}|[A-Z]\d[A-Z]\d[A-Z]?|[A-Z]{2,5}\d[A-Z]{1,3}\d{0,2})(?![\w\-/])"
)
_PROTECTED = re.compile(
    "|".join(f"(?:{p})" for p in (_UUID, _DIGEST, _NUMBERS, _CODES, _VARIANTS, _NUMBERED_TERM))
)
_MIXED_CASE = re.compile(_MIXED_CASE_CODE)
_PLACE_NUMBER = re.compile(r"[A-ZÀ-Þ][a-zß-ÿ]+[-/]\d+")
_WORD_DATE = re.compile(
    r"\d{1,4}[-./][A-Za-z]{3,9}\.?[-./]\d{2,4}|[A-Za-z]{3,9}[-./]\d{1,2}[-./]\d{2,4}"
)
# What says a text is about a person: then a bare code shape may be their record number, and a
# date or an age is theirs, not a study period's ("between January 2000 and June 2003").
_PERSON_SIGNS = re.compile(
    r"(?<![\w.])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|mr|mrs|ms|dr)\.?\s|"
    r"\b(?i:patient|pt|dob|d\.o\.b|born|admitted|readmitted|discharged|died|deceased|surgery|appointment|"
    r"he|she|his|her|him|hers|years?[\s\-]+old|y/?o|MRN|NHS|SSN|CPR|Medicare\s+(?:id|number|no|card)|"
    r"Medicaid|e-?mail|phone|tel|mobile|address|postcode|zip|hosp|hospital\s+no|chart|record\s+(?:number|no)|"
    r"unit\s+number|lives|referred|son|daughter|wife|husband|mother|father|my|our)\b|@"
)

_GREEK_TOKEN = re.compile(r"[\w\-'’]*[\u00b5\u0370-\u03ff\u1f00-\u1fff][\w\-'’]*")


def about_a_person(text: str) -> bool:
    """A title, a patient, a date of birth, a clinical event (admitted, discharged, surgery), a
    personal pronoun, an age in years old, or a record or contact label in the text."""
    return bool(_PERSON_SIGNS.search(text))


@dataclass(frozen=True, slots=True)
class ProperNouns:
    phrases: frozenset[str]  # multiword entries, hyphens as spaces ("Kaplan Meier", "Sierra Leone")
    words: frozenset[str]  # every single-word entry ("Boston", "Cox", "Poland")
    safe_words: frozenset[str]  # those that spell no person's name: science even alone in a run


@lru_cache(maxsize=1)
def proper_nouns() -> ProperNouns:
    """The proper-noun list, plus countries and US states (Faker's en_US lists)."""
    from faker.providers.address.en_US import Provider

    raw = (
        resources.files("research_privacy")
        .joinpath("data", "research_proper_nouns.txt")
        .read_text(encoding="utf-8")
    )
    entries = {
        line.strip() for line in raw.splitlines() if line.strip() and not line.startswith("#")
    }
    entries.update(Provider.countries)
    entries.update(Provider.states)
    names = person_names()
    spaced = {" ".join(e.replace("-", " ").split()) for e in entries}
    words = frozenset(e for e in spaced if " " not in e)
    return ProperNouns(
        phrases=frozenset(e for e in spaced if " " in e),
        words=words,
        safe_words=frozenset(w for w in words if w.casefold() not in names),
    )


_NOUN_RUN = re.compile(
    r"[A-ZÀ-ÖØ-Þ][\w'’\-.]*(?: (?:(?:and|of|de|del|da|do|dos|es|el|la|the|y|du|an|on)(?= [A-ZÀ-ÖØ-Þ])|[A-ZÀ-ÖØ-Þ0-9][\w'’\-.]*))*"
)


def _proper_noun_runs(text: str) -> list[tuple[int, int]]:
    """Stretches of capitalised words (with "and", "of", "de" … between them) that split wholly
    into entries of the proper-noun list, longest entries first."""
    nouns = proper_nouns()
    spans: list[tuple[int, int]] = []
    for run in _NOUN_RUN.finditer(text):
        words = run.group(0).split(" ")
        starts = [run.start()]
        for word in words[:-1]:
            starts.append(starts[-1] + len(word) + 1)
        i = 0
        while i < len(words):
            taken = 0
            for n in range(min(6, len(words) - i), 0, -1):
                window = [w.rstrip(".") for w in words[i : i + n]]
                if not window[0][:1].isupper():
                    break
                phrase = " ".join(" ".join(window).replace("-", " ").split())
                single = re.sub(r"['’]s$", "", window[0]) if n == 1 else ""
                alone = (
                    len(words) == 1
                )  # "in China", "Poland,": no capitalised neighbour to make a name with
                if (
                    (" " in phrase and phrase in nouns.phrases)
                    or single in nouns.safe_words
                    or (alone and single in nouns.words)
                ):
                    taken = n
                    break
            if taken:
                last = words[i + taken - 1].rstrip(".")
                spans.append((starts[i], starts[i + taken - 1] + len(last)))
                i += taken
            else:
                i += 1
    return spans


def protected_spans(text: str, *, personal: bool | None = None) -> list[tuple[int, int]]:
    """Merged (start, end) spans of scientific notation and research proper nouns in `text` (see
    the module docstring); `personal` is `about_a_person(text)`, computed when not given."""
    return merge(notation_spans(text, personal=personal) + proper_noun_spans(text))


def notation_spans(text: str, *, personal: bool | None = None) -> list[tuple[int, int]]:
    """The notation alone, proper nouns left out: what an address run may not hold ("Vieja
    Vanuatu, YUC 38405" is an address for all that Vanuatu is a country)."""
    if personal is None:
        personal = about_a_person(text)
    spans = [m.span() for m in _PROTECTED.finditer(text)]
    spans += [
        m.span()
        for m in _MIXED_CASE.finditer(text)
        if not (_WORD_DATE.fullmatch(m.group(0)) or _PLACE_NUMBER.fullmatch(m.group(0)))
    ]  # not 26-Feb-1980, Kota-995431
    spans += [m.span() for m in _GREEK_TOKEN.finditer(text) if greek_notation(m.group(0))]
    if not personal:
        spans += [m.span() for m in _CODE_SHAPE.finditer(text)]
        spans += [m.span() for m in _RESEARCH_NUMBERS.finditer(text)]
    return merge(spans)


def proper_noun_spans(text: str) -> list[tuple[int, int]]:
    """Places, institutions, cohorts and eponyms of research text, as whole runs."""
    return _proper_noun_runs(text)


def merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Is [start, end) wholly inside one of the merged `spans`?"""
    return any(s <= start and end <= e for s, e in spans)
