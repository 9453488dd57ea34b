"""People as clinicians write them: a given name alone, a surname as a subject, lowercase names.

The patterns (`names` and the other detectors) find names that have a shape: a title, a cue word, a
listed given name before a surname. Clinicians also write
- a given name alone where it is the patient: "Does Priyanka's eGFR …", "For Ingrid (MRN …)",
  "whether Juan should continue", "our patient Tomasz";
- a surname alone as the subject of a clinical verb: "Kowalczyk was admitted …",
  "Ní Dhomhnaill was readmitted", "MRN …: Karimi since 3 May";
- lowercase names after a title or a patient cue: "mr de la fuente-ortega", "ms park presented",
  "pt ingrid halvorsen";
- names with particles (bin, de la, van der, Ní, al-, dos): `extend_name` grows a found name over them.
- an inverted name ("Roe, Jane", "Van der Berg, Pieter") where the given name is a listed one or a
  label or a clinical verb stands beside it ("Discharge summary for Mamani, Wayra:");
- a name after a newborn's label, as after a title ("Baby girl Maria", "Infant of Aoife Ní Bhriain").
Names in capitals and names split by invisible characters reach these rules already written as
names (`research_privacy.reading`).
`name_spans` yields these on the text the patterns left (identifiers already taken are NUL bytes).
A word that is known science (the allow-list, an eponym, a proper noun of research text) is
never taken for a person by the weaker cues; a title is cue enough for any word after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from research_privacy import vocabulary
from research_privacy.detectors.base import NAME
from research_privacy.detectors.unlisted import STOP_WORDS
from research_privacy.science import proper_nouns
from research_text import word_list

PARTICLES = word_list("particles.names")
_PARTICLE_PREFIX = re.compile(r"^(?:al|el|ul|bin|ibn|abu|ben|d|o|mac|mc)[-'’]\w", re.IGNORECASE)
_TOKEN = re.compile(r"[\w\u0300-\u036F]+(?:[-'’][\w\u0300-\u036F]+)*")
_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]?", re.IGNORECASE)
# Words before a bare given name that make it the person talked about.
_BEFORE = word_list("cues.before_given_name")
# Words after a name-shaped unknown word that make it the person talked about.
_AFTER = word_list("cues.after_name")
STRONG_VERBS = (
    r"(?:was\s+|is\s+|has\s+been\s+|had\s+been\s+)?(?:now\s+)?(?:admitted|readmitted|discharged|seen|reviewed|referred|"
    r"transferred|intubated|started\s+on|presented|presents|underwent|complains|complained|declined|declines|tolerated|"
    r"tolerates|attended|denies|denied|collapsed|is\s+now\s+on|since)\b"
)
LABEL_AFTER = r",?\s*\(?(?:DOB|D\.O\.B\.?|MRN|NHS|born|aged)\b"  # "Anneke de Vries, DOB …"
_WEAK_VERBS = (
    r"(?:has\s+been\s+on|had\s+been\s+on|is\s+on|was\s+on|is\s+taking|was\s+taking|reports|reported|developed|"
    r"develops|died|lives|remains\s+on|continues\s+on|returned|fell|received|receives|takes|took|"
    r"was\s+diagnosed|was\s+found|was\s+treated|was\s+reviewed)\b"
)
_SUBJECT = re.compile(
    r"(?:^|(?<=[.;:!?—–\n(])\s*|(?<=\s[—–]\s))([^\s\x00][^\x00\n]{0,60}?)(?:(\s+"
    + STRONG_VERBS
    + r"|"
    + LABEL_AFTER
    + r")|\s+"
    + _WEAK_VERBS
    + r")"
)
# A title, or a newborn's label ("Baby girl Maria", "Infant of Aoife Ní Bhriain"): a name follows.
_TITLE = re.compile(
    r"(?<![\w.])(?<!\d\s)(?:(?:[Mm]rs?|[Mm]s|[Mm]iss|[Mm]x|[Dd]r|[Pp]rof)\.?|(?i:baby\s+(?:girl|boy|of)|infant\s+of))"
    r"\s+(?=\S)"
)
_EPONYM_FOLLOWERS = vocabulary.EPONYM_HEADS | word_list("heads.eponym_followers")


def _hidden(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PLACEHOLDER.finditer(text)]


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and not word.isupper() and not any(c.isdigit() for c in word)


def _listed(word: str) -> bool:
    """A proper noun of research text (a place, an institution, a cohort, an eponym)."""
    base = re.sub(r"['’]s?$", "", word)
    return base in proper_nouns().words or base in vocabulary.eponyms()


def is_particle(word: str) -> bool:
    return word.casefold() in PARTICLES or (
        bool(_PARTICLE_PREFIX.match(word)) and word[:1].islower()
    )


_NAME_SHAPE = re.compile(
    r"^(?:Mc|Mac|O['’]|D['’]|Fitz)?[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ\u0100-\u024f]+(?:[-'’][A-ZÀ-ÖØ-Þa-z][a-zß-öø-ÿ\u0100-\u024f]+)*$"
)
# Word endings of terms, not names ("Stacking", "Remarkably", "Differences").
_TERM_ENDINGS = (
    "tion",
    "sion",
    "ment",
    "ness",
    "ity",
    "ics",
    "ology",
    "ous",
    "ive",
    "ism",
    "able",
    "ible",
    "ated",
    "ized",
    "ised",
    "ally",
    "ings",
    "ences",
    "ances",
    "ting",
    "king",
    "ling",
    "sing",
    "ring",
    "ying",
)


def unknown_word(word: str, *, shortest: int = 2) -> bool:
    """Shaped like a name (capital then lowercase: not OmpA, not DESMOND), and neither a word of the
    vocabulary in any case nor a symbol, eponym or proper noun of research, nor a term by its ending:
    what a name is when no list holds it."""
    base = re.sub(r"['’]s?$", "", word)
    if (
        len(base) < shortest
        or not _NAME_SHAPE.match(base)
        or _listed(base)
        or base in vocabulary.symbols()
    ):
        return False
    if (
        base.lower().endswith(_TERM_ENDINGS)
        or base.lower() in STOP_WORDS
        or _listed(base.rstrip("s"))
    ):
        return False  # a term by its ending, a function word, an eponym's plural ("Alzheimers")
    parts = [part for part in re.split(r"[-'’]", base) if part]
    if len(parts) > 1 and any(len(part) < 3 for part in parts[1:]):
        return False  # "Nt-Gln", "G-rich": notation; names join longer parts ("Mei-Ling", "Fuente-Ortega")
    return not all(
        vocabulary.known_word(part.lower()) or part.lower() in PARTICLES for part in parts
    )


def person_word(word: str) -> bool:
    """A capitalised word that is a listed person's name (even if also a word: "Park", "Rose"),
    and no proper noun of research: enough next to a name already found."""
    base = re.sub(r"['’]s?$", "", word)
    return unknown_word(base) or (
        _capitalised(base)
        and not _listed(base)
        and base.casefold() in vocabulary.person_names()
        and base.lower() not in STOP_WORDS
    )


def name_spans(text: str, *, personal: bool = True) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, value, NAME) for every name these rules find in `text` (possibly overlapping).

    `personal` says the text is about a person (`science.about_a_person`); without it a bare
    capitalised word is a gene or a drug as often as a name, and only the possessive, a verb
    only a person does and a title count ("Does Priyanka's eGFR …", "Kowalczyk was admitted")."""
    hidden = _hidden(text)
    tokens = [
        (m.start(), m.end(), m.group(0))
        for m in _TOKEN.finditer(text)
        if not any(s <= m.start() < e for s, e in hidden) and "\x00" not in m.group(0)
    ]
    yield from _possessives(text, tokens)
    if personal:
        yield from _bare_given_names(text, tokens)
    yield from _subjects(text, personal=personal)
    yield from _after_titles(text, tokens)
    yield from _inverted(text, tokens)


_DISEASE = re.compile(
    r"(?:itis|osis|iasis|aemia|emia|oma|omas|pathy|plasia|trophy|algia|penia|orrhoea|orrhea)$"
)


def _possessives(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    """ "Priyanka's eGFR": a person's word owning something that is not what an eponym owns
    ("Parkinson's disease", "Cohen's kappa", "Hashimoto's thyroiditis")."""
    for i, (start, _end, word) in enumerate(tokens):
        if not re.search(r"['’]s$", word):
            continue
        base = word[:-2]
        following = (tokens[i + 1][2] if i + 1 < len(tokens) else "").lower()
        if following in _EPONYM_FOLLOWERS or _DISEASE.search(following):
            continue
        if unknown_word(base) or person_word(base):
            yield start, start + len(base), base, NAME


ID_AFTER = re.compile(
    r"\s*\(\s*(?:\x00|\[|(?i:MRN|DOB|NHS|SSN|CPR|ID|hosp|hospital|record|unit|chart|age|aged|born|dob)\b)"
)


def _bare_given_names(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    """A word shaped like a name and known to no vocabulary, after "for / whether / ask …" or before
    "who / should / underwent …" or "(MRN …": "For Ingrid (MRN …)", "asks whether Juan should"."""
    for i, (start, end, word) in enumerate(tokens):
        if not unknown_word(word, shortest=3):
            continue
        previous = tokens[i - 1][2] if i else ""
        following = tokens[i + 1][2] if i + 1 < len(tokens) else ""
        if following[:1].isdigit() and not text[end : tokens[i + 1][0]].strip():
            continue  # "Lys 9", "Mark 2": a numbered term
        cue_before = previous.lower() in _BEFORE and text[tokens[i - 1][1] : start].strip() in (
            "",
            ",",
        )
        cue_after = (
            following.lower() in _AFTER and not text[end : tokens[i + 1][0]].strip(" ,")
        ) or bool(ID_AFTER.match(text, end))
        if cue_before or cue_after:
            yield start, end, word, NAME


def _subjects(text: str, *, personal: bool = True) -> Iterator[tuple[int, int, str, str]]:
    """A clause that opens with a name and goes on with a clinical verb: "Kowalczyk was admitted",
    "De la Fuente-Ortega declined", "Ní Dhomhnaill was readmitted". Before a verb only a person
    does (admitted, underwent, complains of) a listed person's name is enough ("Park presented");
    before any verb (has, was, developed) the words must be unknown ones ("Malaria has …" is science)."""
    for match in _SUBJECT.finditer(text):
        words = list(_TOKEN.finditer(match.group(1)))
        if not words or len(words) > 4 or _PLACEHOLDER.search(match.group(1)):
            continue
        values = [w.group(0) for w in words]
        if not match.group(2) and not personal:
            continue

        def fits(value: str, named: bool = bool(match.group(2))) -> bool:
            return person_word(value) if named else unknown_word(value, shortest=3)

        if not all(is_particle(v) or fits(v) for v in values):
            continue
        if all(is_particle(v) for v in values) or not (
            values[-1][:1].isupper() or _PARTICLE_PREFIX.match(values[-1])
        ):
            continue
        start = match.start(1) + words[0].start()
        end = match.start(1) + words[-1].end()
        yield start, end, text[start:end], NAME


def _after_titles(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    """ "mr de la fuente-ortega", "ms park": after a title any word is a name, then particles and
    words that are not known science, up to four."""
    starts = {start: i for i, (start, _, _) in enumerate(tokens)}
    for title in _TITLE.finditer(text):
        i = starts.get(title.end())
        first = tokens[i][2] if i is not None else ""
        if (
            i is None
            or first.lower() in STOP_WORDS
            or (first.isupper() and len(first) > 1)
            or any(c.isdigit() for c in first)
        ):
            continue
        if (
            first.islower()
            and vocabulary.known_word(first)
            and first not in vocabulary.person_names()
        ):
            continue  # "200 ms per frame": a unit, not a title
        chosen = [i]
        while i + 1 < len(tokens) and len(chosen) < 4:
            gap = text[tokens[i][1] : tokens[i + 1][0]]
            word = tokens[i + 1][2]
            if gap != " ":
                break
            particle = is_particle(word)
            if not particle and (
                vocabulary.is_scientific(word, tokens[i][2]) or word.lower() in STOP_WORDS
            ):
                break
            chosen.append(i + 1)
            i += 1
        while chosen and is_particle(tokens[chosen[-1]][2]) and len(chosen) > 1:
            chosen.pop()
        start, end = tokens[chosen[0]][0], tokens[chosen[-1]][1]
        yield start, end, text[start:end], NAME


# Beside an inverted name, what makes it a person's: a document or patient label before it
# ("Discharge summary for ROE, JANE:", "Re: Roe, Jane"), a record label or a clinical verb after it.
_INVERTED_BEFORE = re.compile(
    r"(?i:\b(?:for|re|patient|pt|name|surname|summary|letter|referral|note|notes|regarding))\s*[:\-–—]?\s*$"
)
_INVERTED_AFTER = re.compile(
    r"\s*(?:"
    + LABEL_AFTER
    + r"|\s+"
    + STRONG_VERBS
    + r"|\(\s*(?:\x00|(?i:MRN|DOB|NHS|hosp|hospital|record|unit|chart)\b))"
)


def _inverted(text: str, tokens: list[tuple[int, int, str]]) -> Iterator[tuple[int, int, str, str]]:
    """ "Roe, Jane", "ROE, JANE" (read as "Roe, Jane"), "Van der Berg, Pieter": a surname, a comma
    and a given name — where the given name is a listed one, or a label or a clinical verb stands
    beside the pair ("Discharge summary for Mamani, Wayra:", "Okafor, Chidi (MRN …)"). Both sides
    must be name words, never science: "cells, mice" and "Boston, Jordan" stay."""
    for i in range(len(tokens) - 1):
        _, end, word = tokens[i]
        if text[end : tokens[i + 1][0]] not in (", ", ",\u00a0") or is_particle(word):
            continue
        first = i
        while (
            first > 0
            and i - first < 3
            and text[tokens[first - 1][1] : tokens[first][0]] == " "
            and (is_particle(tokens[first - 1][2]) or person_word(tokens[first - 1][2]))
        ):
            first -= 1
        surname = [tokens[j][2] for j in range(first, i + 1)]
        if not person_word(word) or not all(is_particle(w) or person_word(w) for w in surname):
            continue
        last = i + 1
        if (
            last + 1 < len(tokens)
            and text[tokens[last][1] : tokens[last + 1][0]] == " "
            and person_word(tokens[last + 1][2])
            and not is_particle(tokens[last + 1][2])
        ):
            last += 1
        given = [tokens[j][2] for j in range(i + 1, last + 1)]
        if not all(person_word(w) for w in given):
            continue
        listed = (
            given[0].casefold() in vocabulary.given_names()
            or re.split(r"[-'’]", given[0])[0].casefold() in vocabulary.given_names()
        )
        begin, finish = tokens[first][0], tokens[last][1]
        cue = bool(_INVERTED_BEFORE.search(text, max(0, begin - 40), begin)) or bool(
            _INVERTED_AFTER.match(text, finish)
        )
        if listed or cue:
            yield begin, finish, text[begin:finish], NAME


_NEXT = re.compile(r" ([\w'’][\w'’\-]*)")
_PREVIOUS = re.compile(r"([\w'’][\w'’\-]*) $")


def extend_name(text: str, start: int, end: int) -> tuple[int, int]:
    """A found name grown over the particles and name words around it: "[Juan] de la Fuente-Ortega",
    "[Hye-jin] Park", "Pieter [van der Berg]", "Mohammed [al-Harbi]"."""
    cursor, steps = end, 0
    while steps < 5:
        following = _NEXT.match(text, cursor)
        if following is None:
            break
        word = following.group(1).rstrip("'’")
        steps += 1
        if is_particle(word):
            cursor = following.start(1) + len(word)
            continue
        if person_word(word):
            end = cursor = following.start(1) + len(word)
            continue
        break
    absorbed, steps = False, 0
    while steps < 5:
        previous = _PREVIOUS.search(text, max(0, start - 40), start)
        if previous is None:
            break
        word, steps = previous.group(1), steps + 1
        if is_particle(word):
            start, absorbed = previous.start(1), True
            continue
        if absorbed and person_word(word):
            start = previous.start(1)
        break
    return start, end
