"""A paper's design and size as its abstract states them: "randomised trial, 19,114 adults".

    >>> study_of("We randomized 19,114 adults aged 70 years or older in a double-blind trial.")
    'randomised trial, 19,114 adults'

Read from the words alone, no model: the first design named (a meta-analysis before a systematic
review before a randomised trial, then cohort, case-control, cross-sectional and other
observational designs, case series and reports, animal and in-vitro studies), and the largest
count of people or animals the abstract gives ("2331 medically stable outpatients" → "2,331
outpatients"; a subgroup is never larger than the whole). Empty when the abstract states neither.
"""

from __future__ import annotations

import re

# (pattern, design), first match wins: the more specific designs before the ones they mention.
DESIGNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), design)
    for pattern, design in (
        (r"\bmeta-?analys[ie]s\b", "meta-analysis"),
        (r"\bsystematic(?:\s+literature)?\s+review\b", "systematic review"),
        (r"(?<!non-)\brandomi[sz]ed\b|\brandomly\s+assigned\b|\bRCTs?\b", "randomised trial"),
        (r"\b(?:prospective|retrospective|population-based)?\s*cohort\b", "cohort study"),
        (r"\bcase-?control\b", "case-control study"),
        (r"\bcross-?sectional\b", "cross-sectional study"),
        (r"\b(?:clinical|phase\s+(?:[1-4]|I{1,3}V?))\s+trial\b", "clinical trial"),
        (r"\bobservational\s+stud(?:y|ies)\b", "observational study"),
        (r"\bcase\s+series\b", "case series"),
        (r"\bcase\s+report\b", "case report"),
        (r"\b(?:in\s+mice|mouse\s+model|in\s+rats|rat\s+model|knockout\s+mice)\b", "animal study"),
        (r"\bin\s+vitro\b", "in-vitro study"),
    )
)
WHO = (
    "participants|patients|outpatients|inpatients|adults|subjects|children|women|men|individuals|"
    "people|persons|volunteers|infants|neonates|adolescents|students|residents|employees|workers|"
    "veterans|pregnancies|mothers|twins|respondents|survivors|smokers|mice|rats"
)
# A number (1,234 / 1 234 / 1234), up to three describing words, then who was counted.
COUNT = re.compile(
    rf"(?<![\d.,])(\d{{1,3}}(?:[,\u2009\u202f ]\d{{3}})+|\d+)\s+(?:[A-Za-z-]+\s+){{0,3}}?({WHO})\b",
    re.IGNORECASE,
)


def design_of(abstract: str) -> str:
    """The first design the abstract names (`DESIGNS`' order), or ""."""
    return next((design for pattern, design in DESIGNS if pattern.search(abstract or "")), "")


YEAR_BEFORE = re.compile(r"\b(?:in|since|from|by|until|during|of)\s+$", re.IGNORECASE)


def size_of(abstract: str) -> str:
    """The largest count of people or animals the abstract gives ("2,331 outpatients"), or ""
    ("in 2010 patients were …" is a year, not a count)."""
    text = abstract or ""
    counts = []
    for found in COUNT.finditer(text):
        number, who = found.group(1), found.group(2)
        year = re.fullmatch(r"(?:19|20)\d\d", number) is not None
        if year and YEAR_BEFORE.search(text[max(0, found.start() - 10) : found.start()]):
            continue
        counts.append((int(re.sub(r"\D", "", number)), who.lower()))
    counts = [(n, who) for n, who in counts if n > 1]
    if not counts:
        return ""
    n, who = max(counts, key=lambda c: c[0])
    return f"{n:,} {who}"


def study_of(abstract: str) -> str:
    """The design and size the abstract states, joined ("randomised trial, 19,114 adults"), or ""."""
    return ", ".join(part for part in (design_of(abstract), size_of(abstract)) if part)
