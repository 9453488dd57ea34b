"""Names by pattern and list: after an honorific ("Dr. Alvarez") or a context word ("patient Jane
Roe", "Name: …"), after a title in another language (`INTERNATIONAL`: Sra., Herr, Dott.ssa),
and a common US given name or surname (Faker's en_US lists, `name_lists`) next to another
capitalised word (`name_spans`). `TITLES` and `PATIENT_CUES` are the words that introduce a
person, for the other detectors and the outbound guard."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from research_privacy.detectors.base import (
    CAP,
    MONTH,
    NAME,
    PARTICLE,
    I,
    Recogniser,
    compiled,
)
from research_text import word_list


@lru_cache(maxsize=1)
def name_lists() -> tuple[frozenset[str], frozenset[str]]:
    """Common US given names and surnames (Faker's en_US lists), minus everyday words."""
    from faker.providers.person.en_US import Provider

    common_words = word_list("names.everyday")
    given = frozenset(n for n in Provider.first_names if n not in common_words)
    surnames = frozenset(n for n in Provider.last_names if n not in common_words)
    return given, surnames


_NOT_NAMES = word_list("capitals.not_names")


_WORD_ENDINGS = (
    "tion",
    "ment",
    "ics",
    "ology",
    "ness",
    "ity",
    "ive",
    "ase",
    "ine",
    "ide",
    "ol",
    "ing",
    "ous",
)


def _looks_like_name(value: str) -> bool:
    """A capitalised run after a person cue: a listed name, or 2–3 words that are not common ones."""
    tokens = [t.rstrip(".") for t in value.split()]
    if any(t in _NOT_NAMES for t in tokens):
        return False
    given, surnames = name_lists()
    if any(t in given or t in surnames for t in tokens):
        return True
    return len(tokens) >= 2 and not any(t.lower().endswith(_WORD_ENDINGS) for t in tokens)


# Lookaheads, so "Later John Smith" still yields "John Smith" after rejecting "Later John".
_PAIR = re.compile(r"(?=\b(" + CAP + r")(\s+(?:[A-Z]\.\s*)?)(" + CAP + r")\b)")


_INVERTED = re.compile(r"(?=\b(" + CAP + r"),\s+(" + CAP + r")\b)")


def name_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """`Given Surname`, `Given M. Surname` and `Surname, Given` pairs by the name lists."""
    given, surnames = name_lists()
    for match in _PAIR.finditer(text):
        first, last = match.group(1), match.group(3)
        if first in _NOT_NAMES or last in _NOT_NAMES:
            continue
        if first in given or (last in surnames and first in surnames):
            yield match.start(1), match.end(3), text[match.start(1) : match.end(3)]
    for match in _INVERTED.finditer(text):
        last, first = match.group(1), match.group(2)
        if last in surnames and first in given:
            yield match.start(1), match.end(2), text[match.start(1) : match.end(2)]


TITLES = (
    r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Madam|Mme|Mlle|M|Monsieur|Madame|Herr|Frau|Hr|Fr|Sr|Sra|Srta|Señor|Señora|"
    r"Don|Doña|Dña|Sig|Sig\.ra|Signor|Signora|Dott|Dott\.ssa|Dhr|Mevr|Pan|Pani|Gospodin|Gospozha|Shri|Smt|"
    r"Kumari|Sayın|Bay|Bayan|Ms\.|Mrs\.)"
)


# Phrases after which the next unknown words are a person: "my patient", "pt", "DOB", "named".
PATIENT_CUES = re.compile(
    r"\b(?:my\s+patient|our\s+patient|the\s+patient|patient|pt|pts|client|resident|case\s+of|named|name|"
    r"called|dob|d\.o\.b|born|son|daughter|wife|husband|mother|father|sister|brother|spouse|partner|"
    r"guardian|caregiver|relative|next\s+of\s+kin|contact|seen\s+by|referred\s+by|signed\s+by|attending|"
    r"dear|nurse|physician|patient(?:e|in)|paciente|patiënt|pacjent|пациент(?:ка)?|"
    + TITLES.replace("|M|", "|")
    + r")\b\.?\s*[:,]?",
    I,
)


US: tuple[Recogniser, ...] = (
    # Names.
    Recogniser(
        NAME,
        compiled(
            r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Madam)\.?\s+((?:[A-Z]\.\s*)*"
            + CAP
            + r"(?:\s+(?:[A-Z]\.\s*)*"
            + CAP
            + r"){0,2})"
        ),
        1,
    ),
    Recogniser(
        NAME,
        compiled(
            r"\b(?i:patient|pt\.?|name|named|called|son|daughter|wife|husband|mother|father|spouse|sister|brother|"
            r"guardian|caregiver|contact|seen by|referred by|signed by|attending|dear|nurse|physician)"
            r"(?:\s+(?i:is|was|of))?\s*[:,]?\s+((?:"
            + CAP
            + r"|[A-Z]\.)(?:\s+(?:"
            + CAP
            + r"|[A-Z]\.)){0,2})",
        ),
        1,
        accept=_looks_like_name,
    ),
)


INTERNATIONAL: tuple[Recogniser, ...] = (
    # Names after a title in any of the listed languages (Sra. Núñez, Herr Müller, Dott.ssa Bianchi).
    Recogniser(
        NAME,
        re.compile(
            r"(?<!\w)"
            + TITLES
            + r"\.?\s+((?:[A-ZÀ-ÖØ-Þ]\.\s*)*[A-ZÀ-ÖØ-Þ][\w'’\-]+(?:\s+(?:"
            + PARTICLE
            + r"\s+)?(?!(?i:"
            + MONTH
            + r")\b)[A-ZÀ-ÖØ-Þ][\w'’\-]+){0,3})"
        ),
        1,
    ),
)
