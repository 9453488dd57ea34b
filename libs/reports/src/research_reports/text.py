"""Sentence splitting, content tokens and verbatim matching for the citation checker.

Deliberately lexical and deterministic: the checker has to give the same answer for the same
report on every machine, offline, and its failures must be explainable ("the sentence shares
1 of 7 content words with source [3]").
"""

from __future__ import annotations

import re
import unicodedata

from research_text import word_list

MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
TAG = re.compile(r"\*{0,2}\[[A-Z][A-Z_ ]+\]\*{0,2}")  # **[SUPPORTED]**, [REVISION_NEEDED]
NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(\s?%)?")
YEAR = re.compile(r"^(19|20)\d\d$")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]*")
QUOTED = re.compile(r'"([^"]{12,})"')
_ABBREVIATIONS = (
    "et al.",
    "e.g.",
    "i.e.",
    "vs.",
    "cf.",
    "Fig.",
    "approx.",
    "ca.",
    "Dr.",
    "No.",
    "Eq.",
    "resp.",
)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")

STOPWORDS = word_list("stopwords.reports")

# Words of the reports' own vocabulary that are capitalised without naming anything.
REPORT_VOCABULARY = word_list("words.report_vocabulary")


def normalise(text: str) -> str:
    """Unicode-normalised, typographic quotes/dashes folded, whitespace collapsed, case-folded:
    what "verbatim" means when a quote is compared with its source."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans("\u2018\u2019\u201c\u201d\u2013\u2014\u2212", "''\"\"---"))
    text = re.sub(r"-\s*\n\s*", "-", text)  # hyphenation across a line break
    return re.sub(r"\s+", " ", text).strip().casefold()


_SECTION_LABEL = re.compile(r"^(?:[A-Z][A-Z ,&/]{2,}:?\s+|\([a-z0-9]\)\s*)")
_TRUNCATION_NOTE = re.compile(r"\s*\(ABSTRACT TRUNCATED AT \d+ WORDS\)\.?\s*$", re.IGNORECASE)
# A connective that ties the sentence to the one before it in its abstract, not part of the finding.
_CONNECTIVE = re.compile(
    r"^(?:indeed|moreover|furthermore|in addition|additionally|however|in turn|thus|therefore|hence|"
    r"consequently|accordingly|in contrast|conversely|likewise|similarly|notably|importantly|finally|"
    r"taken together|together|collectively|overall|in conclusion|in summary|here|herein),\s+(?=\S)",
    re.IGNORECASE,
)


def statement_of(sentence: str) -> str:
    """What a report states of a quoted sentence: the sentence without a leading section label
    ("RESULTS", "DESIGN, SETTING, AND PATIENTS"), a leading connective that points at the sentence
    before it ("Indeed,", "Moreover,") or a trailing extraction note ("(ABSTRACT TRUNCATED AT 250
    WORDS)"). The quote itself stays verbatim."""
    text = _SECTION_LABEL.sub("", _TRUNCATION_NOTE.sub("", sentence.strip())).strip()
    text = _CONNECTIVE.sub("", text)
    return (text[:1].upper() + text[1:]) if text else sentence.strip()


def found_verbatim(quote: str, source: str) -> bool:
    """Whether `quote` occurs in `source` word for word; an ellipsis (`...` / `…`) in the quote
    stands for omitted text, so its parts must occur in order."""
    hay = normalise(source)
    parts = [
        p.strip(" .,;:") for p in re.split(r"\.\.\.|…|\[\.\.\.\]", normalise(quote).strip('"'))
    ]
    parts = [p for p in parts if p]
    if not parts:
        return False
    position = 0
    for part in parts:
        found = hay.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def strip_markup(line: str) -> str:
    """A Markdown line as plain prose: no bullet, emphasis, evidence tags or code ticks."""
    line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)
    line = TAG.sub("", line)
    line = line.replace("**", "").replace("__", "").replace("`", "")
    return re.sub(r"(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)", "", line).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of a prose block; `[N]` markers written after the full stop stay with the
    sentence they follow, and abbreviations (et al., e.g.) do not end a sentence."""
    protected = text
    for abbreviation in _ABBREVIATIONS:
        protected = protected.replace(abbreviation, abbreviation.replace(".", "\x00"))
    protected = re.sub(r"\s+", " ", protected).strip()
    sentences: list[str] = []
    for piece in _SPLIT.split(protected):
        chunk = piece.replace("\x00", ".").strip()
        lead = re.match(r"^((?:\[\d+(?:\s*,\s*\d+)*\]\s*)+)", chunk)
        if lead and sentences:
            sentences[-1] = sentences[-1] + " " + lead.group(1).strip()
            chunk = chunk[lead.end() :].strip()
        if chunk:
            sentences.append(chunk)
    return sentences


def cited_ids(sentence: str) -> list[int]:
    """Reference numbers of every `[N]` / `[N, M]` marker, in order, without repeats."""
    ids = [int(n) for m in MARKER.finditer(sentence) for n in m.group(1).split(",")]
    return list(dict.fromkeys(ids))


def without_markers(sentence: str) -> str:
    return re.sub(r"\s+", " ", MARKER.sub("", sentence)).strip()


def _stem(word: str) -> str:
    for suffix in (
        "ational",
        "ization",
        "ations",
        "ation",
        "ments",
        "ment",
        "ness",
        "ities",
        "ity",
        "ing",
        "ies",
        "ied",
        "ed",
        "es",
        "ly",
        "s",
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def content_tokens(text: str) -> set[str]:
    """Stemmed content words (no stopwords, at least 3 letters) — what "overlap" counts."""
    return {
        _stem(w)
        for w in (m.group(0).lower().strip("'-") for m in WORD.finditer(text))
        if len(w) >= 3 and w not in STOPWORDS
    }


def numbers(text: str) -> set[str]:
    """Numbers as written (thousands separators dropped; a percent sign kept as `%`)."""
    found = set()
    for match in NUMBER.finditer(without_markers(text)):
        value = (
            match.group(1).replace(",", "")
            if re.fullmatch(r"\d{1,3}(,\d{3})+", match.group(1))
            else match.group(1)
        )
        found.add(value + ("%" if match.group(2) else ""))
    return found


def factual_signals(sentence: str) -> list[str]:
    """Why a sentence states a checkable fact: numbers, years, named entities (capitalised words
    that do not open the sentence, and acronyms), outside the reports' own vocabulary."""
    plain = without_markers(sentence)
    signals: list[str] = []
    for value in sorted(numbers(plain)):
        signals.append(("year " if YEAR.match(value) else "number ") + value)
    words = list(WORD.finditer(plain))
    for index, match in enumerate(words):
        word = match.group(0)
        before = plain[: match.start()].rstrip()
        opens = index == 0 or before.endswith((":", '"', "(", "—", "-", ";"))
        if word.lower() in REPORT_VOCABULARY or word.lower() in STOPWORDS:
            continue
        if re.fullmatch(r"[A-Z]{2,}[0-9]*s?", word) or (
            not opens and re.fullmatch(r"[A-Z][a-z]+[A-Za-z-]*", word)
        ):
            signals.append("entity " + word)
    return list(dict.fromkeys(signals))
