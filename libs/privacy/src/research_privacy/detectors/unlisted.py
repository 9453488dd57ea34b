"""Identifiers found by what they are not: tokens outside the scientific vocabulary.

Patterns find identifiers that have a shape; these rules find the ones that do not, using the
allow-list (`vocabulary`) instead of a list of names:
- a word in a non-Latin script (Иванова, 王芳, محمد, श्रीनिवास) — a lone Greek letter excepted;
- unknown words right after a patient cue or a title ("my patient Ngozi Okonkwo", "pt maría");
- a run of two or more capitalised words none of which is known science ("Margaret Whitfield");
- a token with digits that is not a known symbol or a scientific number ("K9X4421", "0142");
- an address-like run: numbers mixed with two or more unknown words, in any script and street
  form ("Ekstigen 06 97361 Göteborg", "Số 46 Khóm 34", "노원구 논현가 406-82").
Free text keeps everything else: evidence quotes must survive de-identification intact.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from research_privacy import vocabulary
from research_privacy.detectors.base import ADDRESS, MRN, NAME
from research_privacy.detectors.dates import MONTH_NAMES
from research_privacy.detectors.names import PATIENT_CUES, TITLES
from research_privacy.greek import greek_notation
from research_text import word_list

# Placeholders from an earlier pass and DOIs (10.1056/NEJMoa1607141) are never identifiers.
_EXEMPT = re.compile(r"\[[A-Z_]+_\d+\]|\S+@\S+|\b10\.\d{4,9}/[^\s\"<>]+")
_SENTENCE_BREAK = re.compile(r"[;?!\n(){}<>]|\.\s")
_CUE_WINDOW = 4
# Words that are never part of a name, whatever a name list says ("The", "a", "Ten", "Ever").
STOP_WORDS = word_list("stopwords.names")
_TITLE = re.compile(TITLES, re.IGNORECASE)


def _tokens(text: str, protected: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int, str]]:
    hidden = {i for m in _EXEMPT.finditer(text) for i in range(m.start(), m.end())}
    hidden.update(i for start, end in protected for i in range(start, end))  # scientific notation
    return [
        (m.start(), m.end(), m.group(0))
        for m in vocabulary.TOKEN.finditer(text)
        if m.start() not in hidden and m.end() - 1 not in hidden
    ]


def _known(tokens: list[tuple[int, int, str]], i: int) -> bool:
    previous = tokens[i - 1][2] if i > 0 else ""
    following = tokens[i + 1][2] if i + 1 < len(tokens) else ""
    return vocabulary.is_scientific(tokens[i][2], previous, following)


def _capitalised(token: str) -> bool:
    return (
        token[:1].isupper()
        and any(c.isalpha() for c in token)
        and not any(c.isdigit() for c in token)
    )


def _record_like(token: str) -> bool:
    digits = sum(c.isdigit() for c in token)
    if not digits or token in vocabulary.symbols():
        return False
    if token.isdigit():
        return (token.startswith("0") and len(token) >= 3) or len(token) >= 6
    letters = any(c.isalpha() for c in token)
    if letters:
        # Record numbers carry capitals (A1234567, K9X-4421-Q); lowercase hex ids and accession
        # strings are left to the allow-list of the outbound builders, which drops them anyway.
        return (
            digits >= 3 and any(c.isupper() for c in token) and not vocabulary.is_scientific(token)
        )
    return digits >= 6 and not vocabulary.number_allowed(token)


def unlisted_spans(
    text: str,
    protected: Sequence[tuple[int, int]] = (),
    notation: Sequence[tuple[int, int]] | None = None,
) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, value, category) for every identifier these rules find, possibly overlapping;
    `protected` spans (scientific notation and research proper nouns, `research_privacy.science`)
    are no tokens here, except that address runs see proper nouns (`notation` is the rest)."""
    tokens = _tokens(text, protected)
    yield from _other_scripts(text, tokens)
    yield from _after_cues(text, tokens)
    yield from _capitalised_runs(text, tokens)
    yield from _address_runs(text, tokens if notation is None else _tokens(text, notation))
    for start, end, token in tokens:
        if _record_like(token):
            yield start, end, token, MRN


def _other_scripts(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    run: list[tuple[int, int, str]] = []
    for token in [*tokens, (len(text) + 1, len(text) + 1, "")]:
        foreign = (
            bool(token[2]) and not vocabulary.is_latin(token[2]) and not greek_notation(token[2])
        )
        if foreign and (not run or not text[run[-1][1] : token[0]].strip(" ,.-·")):
            run.append(token)
            continue
        if run:
            yield run[0][0], run[-1][1], text[run[0][0] : run[-1][1]], NAME
        run = [token] if foreign else []


def _after_cues(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    starts = {start: i for i, (start, _, _) in enumerate(tokens)}
    for cue in PATIENT_CUES.finditer(text):
        i = next((starts[s] for s in sorted(starts) if s >= cue.end()), None)
        if i is None:
            continue
        chosen: list[int] = []
        previous_end = cue.end()
        while i < len(tokens) and len(chosen) < _CUE_WINDOW:
            start, end, token = tokens[i]
            gap = text[previous_end:start]
            if "\x00" in gap:
                break  # an identifier a pattern already took ends the window
            if _SENTENCE_BREAK.search(gap) and not (chosen and len(tokens[chosen[-1]][2]) == 1):
                break
            if _TITLE.fullmatch(token) and not chosen:
                previous_end = end + (1 if text[end : end + 1] == "." else 0)
                i += 1
                continue  # "seen by Dr. Okafor": the title introduces the name, it is not one
            if _known(tokens, i) or any(c.isdigit() for c in token) or token.lower() in STOP_WORDS:
                break
            chosen.append(i)
            previous_end = end
            i += 1
        if chosen:
            start, end = tokens[chosen[0]][0], tokens[chosen[-1]][1]
            yield start, end, text[start:end], NAME


def _capitalised_runs(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    names = vocabulary.person_names()
    run: list[int] = []
    for i in range(len(tokens) + 1):
        unknown = (
            i < len(tokens)
            and _capitalised(tokens[i][2])
            and tokens[i][2].lower() not in STOP_WORDS
            and tokens[i][2].lower() not in MONTH_NAMES
            and not _known(tokens, i)
        )
        if unknown and run:
            gap = text[tokens[run[-1]][1] : tokens[i][0]]
            joined = not gap.strip() or (gap.strip() == "," and tokens[i][2].casefold() in names)
            if joined:
                run.append(i)
                continue
        if len(run) >= 2 and _name_run([tokens[j][2] for j in run], names):
            start, end = tokens[run[0]][0], tokens[run[-1]][1]
            yield start, end, text[start:end], NAME
        run = [i] if unknown else []


def _name_run(words: list[str], names: frozenset[str]) -> bool:
    """A run of capitalised words that reads as a name: one of them no word of the vocabulary
    ("Margaret Whitfield"), or all of them people's names ("Rose Young"); not a Title-Case term
    ("Sequential Organ Failure", "Oral Potentially Malignant Lesions") nor initials ("A T")."""
    if not any(len(w) > 1 for w in words):
        return False
    # Acronyms ride along ("USNS Akçay FPO") but make no name alone ("The DESMOND", "CAR T").
    unknown = [w for w in words if not _term(w) and not (w.isupper() and len(w) > 1)]
    if all(w.casefold() in names for w in words) and unknown:
        return True  # "Rose Whitfield" — but not "Beaver Dam", two words of the vocabulary
    return bool(unknown)


def _term(word: str) -> bool:
    """A capitalised word of the vocabulary, or hyphenated notation: a one-letter part ("X-ray",
    "C-type", "T-cell") or a lowercase word of the vocabulary last ("Krüppel-like", "Gogh-like")."""
    parts = re.split(r"[-'’]", word)
    if len(parts) > 1 and (
        any(len(p) == 1 for p in parts)
        or (parts[-1].islower() and len(parts[-1]) >= 4 and vocabulary.known_word(parts[-1]))
    ):
        return True
    return all(vocabulary.known_word(p.lower()) for p in parts if len(p) > 1)


_RUN_GAP = re.compile(r"[\s,/\-–]*")


def _title_case_term(token: str) -> bool:
    """A capitalised word of the vocabulary that is no person's name ("American Cancer Society")."""
    return (
        token[:1].isupper()
        and vocabulary.known_word(token.lower())
        and token.casefold() not in vocabulary.person_names()
    )


def _address_runs(
    text: str, tokens: list[tuple[int, int, str]]
) -> Iterator[tuple[int, int, str, str]]:
    """Runs of unknown words and numbers, at least one number and two unknown words."""
    run: list[int] = []

    def close() -> Iterator[tuple[int, int, str, str]]:
        numbers = sum(1 for j in run if any(c.isdigit() for c in tokens[j][2]))
        # Capitalised words of the vocabulary alone make no address ("© 2018 American Cancer Society"),
        # with an unknown word they do ("Plot 14 Adeola Odeku", "989 Sharaf Path").
        words = [tokens[j][2] for j in run if not any(c.isdigit() for c in tokens[j][2])]
        if numbers and len(words) >= 2 and not all(_title_case_term(w) for w in words):
            start, end = tokens[run[0]][0], tokens[run[-1]][1]
            yield start, end, text[start:end], ADDRESS

    for i, (start, _, token) in enumerate(tokens):
        strict = token.isdigit() or not vocabulary.is_scientific(token, initial=False)
        member = (
            strict and token.lower() not in MONTH_NAMES and not vocabulary.is_greek_symbol(token)
        )
        if member and run:
            gap = text[tokens[run[-1]][1] : start]
            abbreviation = (
                gap.startswith(".") and len(tokens[run[-1]][2]) <= 4 and _RUN_GAP.fullmatch(gap[1:])
            )
            if _RUN_GAP.fullmatch(gap) or abbreviation:
                run.append(i)
                continue
        yield from close()
        run = [i] if member else []
    yield from close()
