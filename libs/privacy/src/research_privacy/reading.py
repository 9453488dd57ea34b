"""The text as the rules read it: invisible characters gone, names in capitals written as names.

Two ways of writing hide a name from rules that know a word by its letters and its shape:
- an invisible character inside it: a soft hyphen (U+00AD), a zero-width space, non-joiner or
  joiner (U+200B–U+200D), a word joiner (U+2060) or a byte-order mark (U+FEFF) — "Ro\u00ade" is
  "Roe" on screen and two words to a pattern;
- capitals: EHR exports, discharge letters and headers write "JANE ROE", "ROE, JANE",
  "MRS KOWALCZYK", and a name is known by a capital followed by lowercase letters.

`read(text)` returns a `Reading`: `text` is what every rule reads — the invisible characters
removed, and each word in capitals that can be a name written as one ("JANE ROE" → "Jane Roe",
"VAN DER BERG" → "Van Der Berg", "MCALLISTER" → "McAllister", "MR" → "Mr" before such a name) —
and `span` maps a span found there back to the text as typed, so the replacement applies to the
original text (its invisible characters inside the span go with it, those outside stay).

A word in capitals stays as written when it is science or a label: a listed symbol (COPD, HIV,
TNF, UKPDS), a word of the vocabulary that is no person's name (RECOVERY, ACCORD), a label (DOB,
MRN), a roman numeral, a word with no vowel, two letters, or a word joined to digits or to a part
that is one of those (BRCA1, ICD-10, HF-ACTION). The others (SPRINT, KOWALCZYK, GRACE, MAN) are
written as names only where a person is meant:
- in a run that holds a listed given name or surname that is neither a word nor a symbol ("JANE
  ROE", "PIETER VAN DER BERG") — unless the run is one word in a list of notation ("MODY, LADA");
- after a title, a patient label or a newborn's label, before a clinical verb, a record label or
  a possessive ("MRS KOWALCZYK", "KOWALCZYK was admitted", "INGRID (MRN …)"); a clinical verb in
  capitals is then read in lowercase ("KOWALCZYK WAS ADMITTED");
- a word no list holds, on one side of an inverted pair ("MCALLISTER, Eilidh").
So "SPRINT MIND", "a 45-year-old MAN" and "the GRACE score" stay as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research_privacy import vocabulary
from research_privacy.detectors.people import ID_AFTER, LABEL_AFTER, STRONG_VERBS

INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
# A word of letters, hyphens and apostrophes touching no digit, underscore or other word character.
_WORD = re.compile(r"(?<![\w\-'’])[^\W\d_]+(?:[-'’][^\W\d_]+)*(?![\w\-'’])")
_PART = re.compile(r"[-'’]")
_VOWELS = frozenset("AEIOUYÀÁÂÃÄÅÆÈÉÊËÌÍÎÏÒÓÔÕÖØÙÚÛÜÝŒ")
_ROMAN = re.compile(r"^[IVXLCDM]+$")
# Labels in front of an identifier, not part of a name ("DOB", "MRN"), and words that open a
# header ("RE:", "ATTN").
_LABEL_WORDS = (
    "DOB DOD MRN SSN NHS CHI CPR SIN BSN AHV AVS NIR PESEL MBI OHIP IHI NPI DEA VIN IMEI UDI "
    "TEL FAX ZIP ICD ATC LOINC SNOMED MESH PMID PMCID DOI NCT ISRCTN ATTN "
)
_LABELS = frozenset(_LABEL_WORDS.split())
_TITLES = frozenset(["MR", "MRS", "MS", "MISS", "MX", "DR", "PROF"])
_PARTICLE_WORDS = (
    "DE LA LE DU DES DEL DELLA DI DA DOS DAS DO VAN VON DER DEN TER TEN BIN BINTI BINT IBN ABU "
    "AL EL UL BEN NÍ NIC NI MAC MC Ó Y AF AV ZU "
)
_PARTICLES = frozenset(_PARTICLE_WORDS.split())
_MONTH_WORDS = (
    "JANUARY FEBRUARY MARCH APRIL MAY JUNE JULY AUGUST SEPTEMBER OCTOBER NOVEMBER DECEMBER JAN "
    "FEB MAR APR JUN JUL AUG SEP SEPT OCT NOV DEC "
)
_MONTHS = frozenset(_MONTH_WORDS.split())


@dataclass(frozen=True, slots=True)
class Reading:
    """`original` as typed; `visible`: without its invisible characters; `text`: `visible` with
    names in capitals written as names (same length as `visible`, character for character)."""

    original: str
    visible: str
    text: str
    positions: tuple[int, ...]  # the index in `original` of each character of `visible`

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of `original` that `text[start:end]` was read from."""
        if not self.positions:
            return start, end
        if start >= end:
            at = self.positions[start] if start < len(self.positions) else len(self.original)
            return at, at
        return self.positions[start], self.positions[end - 1] + 1


def read(text: str) -> Reading:
    """`text` as the rules read it (see the module docstring)."""
    positions: tuple[int, ...] = ()
    visible = text
    if _INVISIBLE.search(text):
        kept = [i for i, char in enumerate(text) if char not in INVISIBLE]
        positions = tuple(kept)
        visible = "".join(text[i] for i in kept)
    return Reading(
        original=text, visible=visible, text=_names_in_capitals(visible), positions=positions
    )


def _capitals(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _science(word: str) -> bool:
    """A word in capitals that is notation or a label, never a name."""
    if word in _LABELS or _ROMAN.match(word):
        return True
    for part in _PART.split(word):
        if len(part) == 1 and word.startswith((part + "'", part + "’")):
            continue  # O'SULLIVAN, D'ANGELO
        if (len(part) < 3 and part not in _PARTICLES) or not _VOWELS.intersection(part):
            return True
        if part.casefold() in vocabulary.person_names():
            continue
        if part in vocabulary.listed_symbols() or vocabulary.known_word(part.lower()):
            return True
    return False


def _as_name(word: str) -> str:
    """ "KOWALCZYK" → "Kowalczyk", "FUENTE-ORTEGA" → "Fuente-Ortega", "O'SULLIVAN" → "O'Sullivan",
    "MCALLISTER" → "McAllister"; the word unchanged where lowercasing would change its length."""
    written = re.sub(
        r"[^\W\d_]+", lambda m: m.group(0)[:1] + m.group(0)[1:].lower(), word
    )  # each part after a hyphen or an apostrophe opens with its capital
    if written.startswith("Mc") and len(written) > 3:
        written = "Mc" + written[2].upper() + written[3:]
    return written if len(written) == len(word) else word


def _capital_runs(text: str, words: list[re.Match[str]]) -> list[list[re.Match[str]]]:
    """Runs of name-capable words in capitals, one space apart: "PIETER VAN DER BERG",
    "MRS NÍ DHOMHNAILL"; a word of science ends a run ("KOWALCZYK WAS ADMITTED"), a month stands
    alone."""
    runs: list[list[re.Match[str]]] = []
    for match in words:
        word = match.group(0)
        if word in _MONTHS:
            runs.append([match])
            continue
        if word not in _PARTICLES and word not in _TITLES and _science(word):
            continue
        if (
            runs
            and runs[-1][-1].group(0) not in _MONTHS
            and text[runs[-1][-1].end() : match.start()] == " "
        ):
            runs[-1].append(match)
        else:
            runs.append([match])
    return runs


def _names_in_capitals(text: str) -> str:
    words = [m for m in _WORD.finditer(text) if _capitals(m.group(0))]
    if not words:
        return text
    runs = _capital_runs(text, words)
    verbs: list[tuple[int, int]] = []
    pieces: list[str] = []
    cursor = 0
    for run in runs:
        values = [m.group(0) for m in run]
        if values[0] in _MONTHS:
            near = text[max(0, run[0].start() - 3) : run[0].end() + 3]
            chosen = [bool(re.search(r"\d", near))]  # "SEEN ON 9 OCTOBER": a date's month
        else:
            start, end = run[0].start(), run[-1].end()
            after = _AFTER_A_PERSON.match(text, end)
            verb = _VERB_AFTER.match(text, end)
            if verb is not None and verb.group(0).isupper():
                verbs.append(verb.span())  # "KOWALCZYK WAS ADMITTED": read as "was admitted"
            chosen = _chosen(
                values,
                beside_a_person=after is not None
                or bool(_BEFORE_A_PERSON.search(text, max(0, start - 30), start)),
                inverted=_inverted_pair(text, start, end),
                among_acronyms=len(run) == 1 and _among_acronyms(text, start, end),
            )
        for match, name in zip(run, chosen, strict=True):
            if name:
                pieces.append(text[cursor : match.start()])
                pieces.append(_as_name(match.group(0)))
                cursor = match.end()
    pieces.append(text[cursor:])
    read_text = "".join(pieces)
    for start, end in verbs:
        read_text = read_text[:start] + read_text[start:end].lower() + read_text[end:]
    return read_text


# What makes words in capitals that no list holds a person's: a title or a newborn's label or a
# patient label before them, a clinical verb or a record label after them.
_BEFORE_A_PERSON = re.compile(
    r"(?i:\b(?:mr|mrs|ms|miss|mx|dr|prof)\.?|\bbaby\s+(?:girl|boy|of)|\binfant\s+of|\bpatient|\bpt\.?|\bname"
    r"|\bre)\s*[:,]?\s+$"
)
_VERB_AFTER = re.compile(r"\s+" + STRONG_VERBS, re.IGNORECASE)
_AFTER_A_PERSON = re.compile(
    r"(?i:['’]s\b|\s+" + STRONG_VERBS + r"|" + LABEL_AFTER + r")|" + ID_AFTER.pattern
)


# A word in capitals listed next to it ("MODY, LADA and DKA", "COPD/ASTHMA").
_ACRONYM_BEFORE = re.compile(r"(?<![\w\-])([A-Z][A-Z0-9\-.]*[A-Z0-9])\s*(?:,|/|\band|\bor)\s*$")
_ACRONYM_AFTER = re.compile(r"\s*(?:,|/|and\b|or\b)\s*([A-Z][A-Z0-9\-.]*[A-Z0-9])(?![\w\-])")


def _among_acronyms(text: str, start: int, end: int) -> bool:
    """One word in capitals in a list whose neighbour is notation (a symbol, a code, a word)."""
    before = _ACRONYM_BEFORE.search(text, max(0, start - 30), start)
    after = _ACRONYM_AFTER.match(text, end)
    return any(
        m is not None
        and (
            any(c.isdigit() for c in m.group(1))
            or m.group(1) in vocabulary.listed_symbols()
            or _science(m.group(1))
        )
        for m in (before, after)
    )


# "MCALLISTER, Eilidh", "MAMANI, WAYRA": one side of an inverted name, the other a name word.
_PAIR_AFTER = re.compile(r",\s+([^\W\d_][^\W\d_'’\-]*)(?![\w\-])")
_PAIR_BEFORE = re.compile(r"(?<![\w\-])([^\W\d_][^\W\d_'’\-]*),\s+$")


def _inverted_pair(text: str, start: int, end: int) -> bool:
    for match in (
        _PAIR_AFTER.match(text, end),
        _PAIR_BEFORE.search(text, max(0, start - 40), start),
    ):
        if match is None:
            continue
        other = match.group(1)
        if other[:1].isupper() and not (
            _capitals(other) and (_science(other) or other in vocabulary.listed_symbols())
        ):
            return True
    return False


def _chosen(
    values: list[str], *, beside_a_person: bool, inverted: bool, among_acronyms: bool
) -> list[bool]:
    """Which words of one run in capitals are written as a name: all of them when one is a listed
    name that is neither a word nor a symbol (JANE, ROE, SUBRAMANIAM) — unless it is one word in a
    list of notation ("MODY, LADA and DKA") — or when the run stands beside a person's label or
    verb; in one side of an inverted pair ("MCALLISTER, Eilidh") the words no list holds; none
    otherwise ("SPRINT MIND", "a 45-year-old MAN", "the GRACE score")."""
    names = vocabulary.person_names()
    sure = not among_acronyms and any(
        v not in _PARTICLES
        and v not in _TITLES
        and any(
            p.casefold() in names
            and not vocabulary.known_word(p.lower())
            and p not in vocabulary.listed_symbols()
            for p in _PART.split(v)
            if len(p) > 1
        )
        for v in values
    )
    chosen = [
        v not in _PARTICLES
        and v not in _TITLES
        and (
            sure
            or beside_a_person
            or (
                inverted
                and not among_acronyms
                and v not in vocabulary.listed_symbols()
                and not vocabulary.known_word(v.lower())
            )
        )
        for v in values
    ]
    # A particle belongs to the name word after it ("VAN DER BERG"); a title to the name after it
    # ("MRS CHEN") — "MS patients", "the DR cohort" stay.
    for i in range(len(values) - 1, -1, -1):
        if values[i] in _PARTICLES or values[i] in _TITLES:
            chosen[i] = (
                i + 1 < len(values)
                and chosen[i + 1]
                and (values[i] in _TITLES or values[i + 1] not in _TITLES)
            )
    return chosen
