"""De-identification: find Safe Harbor identifiers and replace them with numbered placeholders.

`find_identifiers` lists what was found (the connector refuses a query that has any);
`deidentify` replaces each distinct value with a placeholder such as `[NAME_1]` and keeps the
mapping in the returned object, so a model's answer can be mapped back locally with
`Deidentified.reidentify` — the original values never leave the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_privacy import locales, recognisers
from research_privacy.unlisted import unlisted_spans

# When two recognisers claim overlapping text, the longer span wins; on equal length, the
# more specific category (earlier here) wins.
_PRIORITY = [
    recognisers.EMAIL,
    recognisers.URL,
    recognisers.IP,
    recognisers.SSN,
    recognisers.MRN,
    recognisers.HEALTH_PLAN,
    recognisers.ACCOUNT,
    recognisers.LICENCE,
    recognisers.DEVICE,
    recognisers.VEHICLE,
    recognisers.FAX,
    recognisers.PHONE,
    recognisers.ADDRESS,
    recognisers.ZIP,
    recognisers.DATE,
    recognisers.AGE,
    recognisers.NAME,
]


_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
# A placeholder of an earlier pass, also lowercased (a report's key) or cut short ("[DATE_1").
_EARLIER_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]?", re.IGNORECASE)
# Labels that introduce an identifier are not one ("[NAME_1], DOB [DATE_1]" read again must not
# turn "DOB" into a name: de-identifying twice changes nothing).
_LABELS = frozenset("DOB DOD MRN SSN NHS ID TEL PHONE FAX EMAIL E-MAIL ZIP POSTCODE ADDRESS MR MRS MS DR".split())


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

    def reidentify(self, text: str) -> str:
        """Put the original values back into text that a model produced from `self.text`."""
        if not self.placeholders:
            return text
        pattern = re.compile("|".join(re.escape(p) for p in sorted(self.placeholders, key=len, reverse=True)))
        return pattern.sub(lambda m: self.placeholders[m.group(0)], text)


def find_identifiers(text: str) -> list[Identifier]:
    """Every identifier in `text`, non-overlapping, in reading order."""
    if not text:
        return []
    candidates: list[Identifier] = []
    tier: dict[int, int] = {}
    for level, group in enumerate((recognisers.RECOGNISERS, locales.RECOGNISERS)):
        for recogniser in group:
            for start, end, value in recogniser.spans(text):
                trimmed = value.strip().rstrip(",")
                if trimmed:
                    offset = start + len(value) - len(value.lstrip())
                    found = Identifier(recogniser.category, trimmed, offset, offset + len(trimmed))
                    candidates.append(found)
                    tier[id(found)] = level
    for start, end, value in recognisers.name_spans(text):
        candidates.append(Identifier(recognisers.NAME, value, start, end))
    rank = {category: i for i, category in enumerate(_PRIORITY)}
    # On equal length the original US patterns win over the international ones (a licence
    # number stays a LICENCE).
    candidates.sort(key=lambda c: (-(c.end - c.start), tier.get(id(c), 0), rank.get(c.category, len(rank)), c.start))
    chosen: list[Identifier] = []
    for candidate in candidates:
        if all(candidate.end <= c.start or candidate.start >= c.end for c in chosen):
            chosen.append(candidate)
    # Then the allow-list rules, on what the patterns left: a date stays a DATE, an e-mail an EMAIL.
    masked = text
    for c in chosen:
        masked = masked[: c.start] + "\x00" * (c.end - c.start) + masked[c.end :]
    unlisted = sorted(
        (Identifier(category, value, start, end) for start, end, value, category in unlisted_spans(masked)),
        key=lambda c: (-(c.end - c.start), c.start),
    )
    for candidate in unlisted:
        if all(candidate.end <= c.start or candidate.start >= c.end for c in chosen):
            chosen.append(candidate)
    chosen = [c for c in chosen if c.value.strip(".:,#").upper() not in _LABELS]
    chosen += _surname_mentions(text, chosen)
    return sorted(chosen, key=lambda c: c.start)


def _surname_mentions(text: str, chosen: list[Identifier]) -> list[Identifier]:
    """Later bare mentions of a found person's surname ("Mrs Roe … Roe's chart")."""
    surnames = {
        c.value.split()[-1].rstrip(".,")
        for c in chosen
        if c.category == recognisers.NAME and len(c.value.split()) >= 2 and "," not in c.value
    }
    extra: list[Identifier] = []
    for surname in sorted(s for s in surnames if len(s) >= 3 and s[0].isupper()):
        for match in re.finditer(r"\b" + re.escape(surname) + r"\b", text):
            if all(match.end() <= c.start or match.start() >= c.end for c in chosen + extra):
                extra.append(Identifier(recognisers.NAME, surname, match.start(), match.end()))
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
    for placeholder in [*table.placeholders, *table.reserved]:
        category, _, number = placeholder.strip("[]").rpartition("_")
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
    result = "".join(pieces)
    if into is None:
        table.text = result
        return table
    return Deidentified(text=result, found=table.found, placeholders=table.placeholders, reserved=table.reserved)
