"""De-identification: find Safe Harbor identifiers and replace them with numbered placeholders.

`find_identifiers` lists what was found (the connector refuses a query that has any);
`deidentify` replaces each distinct value with a placeholder such as `[NAME_1]` and keeps the
mapping in the returned object, so a model's answer can be mapped back locally with
`Deidentified.reidentify` — the original values never leave the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_privacy import detectors, science, vocabulary
from research_privacy.detectors import people
from research_privacy.detectors.unlisted import STOP_WORDS, unlisted_spans
from research_privacy.reading import read
from research_text import word_list

# When two recognisers claim overlapping text, the longer span wins; on equal length, the
# more specific category (earlier here) wins.
_PRIORITY = [
    detectors.EMAIL,
    detectors.URL,
    detectors.IP,
    detectors.SSN,
    detectors.MRN,
    detectors.HEALTH_PLAN,
    detectors.ACCOUNT,
    detectors.LICENCE,
    detectors.DEVICE,
    detectors.VEHICLE,
    detectors.FAX,
    detectors.PHONE,
    detectors.ADDRESS,
    detectors.ZIP,
    detectors.DATE,
    detectors.AGE,
    detectors.NAME,
]


_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
# Identifiers only when the text is about a person (`science.about_a_person`) or a label says so
# ("DOB 03/14/1961"): in research text these are a study period, a population's age, a tool's site.
_A_PERSONS = frozenset({detectors.DATE, detectors.AGE, detectors.URL})
# A placeholder of an earlier pass, also lowercased (a report's key) or cut short ("[DATE_1").
_EARLIER_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]?", re.IGNORECASE)
# Labels that introduce an identifier are not one ("[NAME_1], DOB [DATE_1]" read again must not
# turn "DOB" into a name: de-identifying twice changes nothing).
_LABELS = word_list("labels.identifier")


@dataclass(frozen=True, slots=True)
class Identifier:
    """One identifier found in a text: its Safe Harbor category, value and position."""

    category: str
    value: str
    start: int
    end: int


@dataclass(slots=True)
class Deidentified:
    """De-identified text plus what was replaced (kept in-process only)."""

    text: str
    found: list[tuple[str, str]] = field(default_factory=list)
    placeholders: dict[str, str] = field(default_factory=dict)
    # Placeholders already present in the input (text de-identified upstream): never reused.
    reserved: set[str] = field(default_factory=set)

    def written(self, text: str, *, shared: bool) -> Deidentified:
        """What a pass that filled this table returns for its output `text`.

        A table of the pass's own holds the text itself; a table the caller shares across several
        texts (`into`) keeps its text, and the result is a new value on the same lists.
        """
        if not shared:
            self.text = text
            return self
        return Deidentified(
            text=text, found=self.found, placeholders=self.placeholders, reserved=self.reserved
        )

    def reidentify(self, text: str) -> str:
        """Put the original values back into text that a model produced from `self.text`."""
        if not self.placeholders:
            return text
        pattern = re.compile(
            "|".join(re.escape(p) for p in sorted(self.placeholders, key=len, reverse=True))
        )
        return pattern.sub(lambda m: self.placeholders[m.group(0)], text)


def find_identifiers(text: str, *, personal: bool | None = None) -> list[Identifier]:
    """Every identifier in `text`, non-overlapping, in reading order (`personal`: True reads it as a
    person's text whatever it shows, False as research; None decides as below).

    Patterns first (a labelled one always stands); then what scientific notation covers wholly is
    let go (`science.protected_spans`); then the allow-list and clinician rules on what is left;
    then each name grows over its particles, an address over its flat and postcode, every span to
    whole words, and a person found once is found at every mention.

    A text that shows no person (`science.about_a_person`) is read as research first: its dates,
    ages and web addresses are a study's, its bare counts, ranges and codes are quantities. When
    that reading still finds someone (a name, a phone, a record number), the text is about a
    person after all and is read again as such.

    The rules read the text without its invisible characters and with names in capitals written
    as names (`reading`); each span is of `text` as given, so a replacement takes the whole name.
    """
    if not text:
        return []
    reading = read(text)
    found = _decided(reading.text, personal=personal)
    if reading.text == text:
        return found
    return [
        Identifier(c.category, reading.visible[c.start : c.end], *reading.span(c.start, c.end))
        for c in found
    ]


def _decided(text: str, *, personal: bool | None) -> list[Identifier]:
    if personal is not None:
        return _find(text, personal=personal)
    if science.about_a_person(text):
        return _find(text, personal=True)
    found = _find(text, personal=False)
    if any(c.category not in _A_PERSONS for c in found):
        return _find(text, personal=True)
    return found


def _pattern_candidates(
    text: str, protected: list[tuple[int, int]], *, personal: bool
) -> tuple[list[Identifier], dict[int, int]]:
    """What the recognisers find outside the protected notation, with each find's tier (by `id`):
    0 for the original US patterns, 1 for the international ones."""
    candidates: list[Identifier] = []
    tier: dict[int, int] = {}
    for level, group in enumerate((detectors.RECOGNISERS, detectors.INTERNATIONAL)):
        for recogniser in group:
            for start, _end, value in recogniser.spans(text):
                trimmed = value.strip().rstrip(",")
                if trimmed:
                    offset = start + len(value) - len(value.lstrip())
                    found = Identifier(recogniser.category, trimmed, offset, offset + len(trimmed))
                    if recogniser.group == 0 and science.inside(protected, found.start, found.end):
                        continue  # notation, not a person ("EudraCT 2020-001038-36", a UUID's "0242-4616")
                    if not personal and (
                        recogniser.needs_person
                        or (recogniser.group == 0 and recogniser.category in _A_PERSONS)
                    ):
                        continue  # a study's dates and ages, a tool's web address: no person in the text
                    candidates.append(found)
                    tier[id(found)] = level
    return candidates, tier


def _find(text: str, *, personal: bool) -> list[Identifier]:
    notation = science.notation_spans(text, personal=personal)
    protected = science.merge(notation + science.proper_noun_spans(text))
    candidates, tier = _pattern_candidates(text, protected, personal=personal)
    for start, end, value in detectors.name_spans(text):
        if not science.inside(protected, start, end):
            candidates.append(Identifier(detectors.NAME, value, start, end))
    rank = {category: i for i, category in enumerate(_PRIORITY)}
    # On equal length the original US patterns win over the international ones (a licence
    # number stays a LICENCE).
    candidates.sort(
        key=lambda c: (
            -(c.end - c.start),
            tier.get(id(c), 0),
            rank.get(c.category, len(rank)),
            c.start,
        )
    )
    chosen: list[Identifier] = []
    for candidate in candidates:
        if all(candidate.end <= c.start or candidate.start >= c.end for c in chosen):
            chosen.append(candidate)
    # Then the allow-list and clinician rules, on what the patterns left: a date stays a DATE.
    masked = text
    for c in chosen:
        masked = masked[: c.start] + "\x00" * (c.end - c.start) + masked[c.end :]
    found_later = [
        *unlisted_spans(masked, protected, notation),
        *people.name_spans(masked, personal=personal),
    ]
    unlisted = sorted(
        (
            Identifier(category, value, start, end)
            for start, end, value, category in found_later
            if not science.inside(protected, start, end)
            and (personal or category != detectors.ADDRESS)
        ),
        key=lambda c: (-(c.end - c.start), c.start),
    )
    for candidate in unlisted:
        if all(candidate.end <= c.start or candidate.start >= c.end for c in chosen):
            chosen.append(candidate)
    chosen = [
        c
        for c in chosen
        if c.value.strip(".:,#").upper() not in _LABELS
        and not (
            c.category == detectors.NAME and all(w.lower() in STOP_WORDS for w in c.value.split())
        )
    ]
    chosen = _grown(text, chosen)
    chosen += _mentions(text, chosen, protected)
    return sorted(chosen, key=lambda c: c.start)


_UNIT_BEFORE = re.compile(
    r"(?i:flat|apt|apartment|unit|suite|ste|room|rm|floor|fl)\.?\s+(?:[\w\-]{1,6},?\s+)?$"
)
_POSTCODE_AFTER = re.compile(
    r"\s*[,(]?\s*((?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]\d[A-Z]\s?\d[A-Z]\d|[AC-FHKNPRTV-Y]\d[0-9W]\s?[0-9A-Z]{4}"
    r"|\d{4}\s?[A-Z]{2}|\d{3,6}(?:-\d{3,4})?)(?![\w\-]))"
)


def _grown(text: str, chosen: list[Identifier]) -> list[Identifier]:
    """Spans grown to what they are part of: a name over its particles and name words, an address
    over its flat and its postcode, every span to whole words (never part of a word replaced);
    spans that then overlap become one."""
    grown: list[tuple[int, int, str]] = []
    for c in chosen:
        start, end = c.start, c.end
        if c.category == detectors.NAME:
            start, end = people.extend_name(text, start, end)
        elif c.category == detectors.ADDRESS:
            unit = _UNIT_BEFORE.search(text, max(0, start - 30), start)
            if unit:
                start = unit.start()
            code = _POSTCODE_AFTER.match(text, end)
            if code:
                end = code.end(1)
        while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum() and text[end - 1].isalnum():
            end += 1
        grown.append((start, end, c.category))
    grown.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, category in grown:
        if merged and start < merged[-1][1]:
            previous = merged[-1]
            merged[-1] = (previous[0], max(previous[1], end), previous[2])
        else:
            merged.append((start, end, category))
    return [Identifier(category, text[start:end], start, end) for start, end, category in merged]


_MENTION_SPLIT = re.compile(r"[\s,]+")


def _mentions(
    text: str, chosen: list[Identifier], protected: list[tuple[int, int]]
) -> list[Identifier]:
    """Every other mention of a found person's names ("Mrs Roe … Roe's chart", "For Juan … whether Juan")."""
    words: set[str] = set()
    for c in chosen:
        if c.category != detectors.NAME:
            continue
        for part in _MENTION_SPLIT.split(c.value.strip(".,")):
            word = re.sub(r"['’]s$", "", part)
            if len(word) < 3 or people.is_particle(word) or _PLACEHOLDER.search(word):
                continue
            if word.islower() and vocabulary.known_word(word):
                continue  # "ms park": not every "park" of the text
            words.add(word)
    extra: list[Identifier] = []
    for word in sorted(words, key=len, reverse=True):
        for match in re.finditer(r"(?<![\w\[])" + re.escape(word) + r"(?![\w\]])", text):
            if science.inside(protected, match.start(), match.end()):
                continue
            if all(match.end() <= c.start or match.start() >= c.end for c in chosen + extra):
                extra.append(Identifier(detectors.NAME, word, match.start(), match.end()))
    return extra


def deidentify(text: str, *, into: Deidentified | None = None) -> Deidentified:
    """`text` with every identifier replaced by a numbered placeholder such as `[DATE_2]`.

    Pass `into` to share one placeholder table across several texts (a prompt made of many
    evidence documents): the same value always gets the same placeholder.
    """
    table = into if into is not None else Deidentified(text="")
    by_value = {value: placeholder for placeholder, value in table.placeholders.items()}
    table.reserved.update(_PLACEHOLDER.findall(text))
    counters: dict[str, int] = {}
    for existing in [*table.placeholders, *table.reserved]:
        category, _, number = existing.strip("[]").rpartition("_")
        counters[category] = max(counters.get(category, 0), int(number))
    pieces: list[str] = []
    cursor = 0
    kept = [m.span() for m in _EARLIER_PLACEHOLDER.finditer(text)]
    for identifier in find_identifiers(text):
        if any(start < identifier.end and identifier.start < end for start, end in kept):
            continue  # a placeholder of an earlier pass ("DOB [DATE_1]"): de-identifying twice changes nothing
        placeholder = by_value.get(identifier.value)
        if placeholder is None:
            counters[identifier.category] = counters.get(identifier.category, 0) + 1
            placeholder = f"[{identifier.category}_{counters[identifier.category]}]"
            by_value[identifier.value] = placeholder
            table.placeholders[placeholder] = identifier.value
        table.found.append((identifier.category, identifier.value))
        pieces.append(text[cursor : identifier.start])
        pieces.append(placeholder)
        cursor = identifier.end
    pieces.append(text[cursor:])
    return table.written("".join(pieces), shared=into is not None)
