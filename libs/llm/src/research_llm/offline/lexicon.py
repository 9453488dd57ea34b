"""Words as the offline engine sees them: sentence spans, content tokens and polarity cues.

Everything here is pure and deterministic. Sentence spans (`split_sentences`, defined with the
corpus so ingest and drafting agree on them) keep their character offsets so a quote is always
an exact substring of the evidence text it came from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

# The corpus ingest stores a vector for each of these spans: one definition of a sentence.
from research_corpus.sentences import (
    SentenceSpan as SentenceSpan,  # noqa: PLC0414 - an explicit re-export (mypy strict)
)
from research_corpus.sentences import (
    split_sentences as split_sentences,  # noqa: PLC0414 - an explicit re-export (mypy strict)
)
from research_text import word_list

# The words claim parsing skips, plus the offline engine's own: "more" (a direction word in
# OPPOSITES, no content of its own) and the words every clinical abstract uses, which tell one
# evidence sentence from another no better than "the" does.
STOPWORDS = word_list("stopwords.lexical") | word_list("stopwords.offline")

# Words that flip the polarity of a statement (counted by parity).
NEGATIONS = word_list("negations.polarity")

# Direction words; a pair across two statements signals a contradiction.
OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        frozenset(
            {
                "increase",
                "increases",
                "increased",
                "increasing",
                "higher",
                "elevated",
                "more",
                "greater",
                "raise",
                "raises",
                "raised",
                "upregulated",
                "upregulates",
                "enhance",
                "enhances",
                "enhanced",
            }
        ),
        frozenset(
            {
                "decrease",
                "decreases",
                "decreased",
                "decreasing",
                "lower",
                "reduced",
                "reduce",
                "reduces",
                "less",
                "fewer",
                "downregulated",
                "downregulates",
                "diminish",
                "diminishes",
                "diminished",
            }
        ),
    ),
    (
        frozenset(
            {"improve", "improves", "improved", "benefit", "beneficial", "protective", "protects"}
        ),
        frozenset(
            {
                "worsen",
                "worsens",
                "worsened",
                "harm",
                "harmful",
                "detrimental",
                "impairs",
                "impaired",
            }
        ),
    ),
    (
        frozenset(
            {
                "promote",
                "promotes",
                "promoted",
                "induce",
                "induces",
                "induced",
                "activate",
                "activates",
            }
        ),
        frozenset(
            {
                "inhibit",
                "inhibits",
                "inhibited",
                "suppress",
                "suppresses",
                "suppressed",
                "block",
                "blocks",
            }
        ),
    ),
)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']*")


def stem(word: str) -> str:
    """A light suffix stripper: enough to match `fractures`/`fracture`, `reduced`/`reduce`."""
    if len(word) <= 4 or word[-1].isdigit():
        return word
    for suffix, replacement in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + replacement
    return word


def words(text: str) -> list[str]:
    """Lower-cased words of `text`, in order (stopwords kept)."""
    return [w.lower().strip("'-") for w in _WORD.findall(text)]


@lru_cache(maxsize=50_000)
def content_terms(text: str) -> tuple[str, ...]:
    """Stemmed, stopword-free terms of `text`, in order (duplicates kept).

    Cached: the same evidence sentences are scored for task after task."""
    return tuple(
        stem(w)
        for w in words(text)
        if w and w not in STOPWORDS and w not in NEGATIONS and len(w) > 1
    )


def inverse_document_frequency(documents: Sequence[Iterable[str]]) -> dict[str, float]:
    """Smoothed BM25-style idf of each term over `documents` (each an iterable of terms)."""
    frequency: dict[str, int] = {}
    for terms in documents:
        for term in set(terms):
            frequency[term] = frequency.get(term, 0) + 1
    total = len(documents)
    return {t: math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}


def weighted_coverage(
    query: Iterable[str], candidate: Iterable[str], idf: dict[str, float], default_idf: float
) -> float:
    """Share of the query's idf mass that the candidate's terms cover (0..1)."""
    query_terms = set(query)
    if not query_terms:
        return 0.0
    present = set(candidate)
    total = sum(idf.get(t, default_idf) for t in query_terms)
    hit = sum(idf.get(t, default_idf) for t in query_terms if t in present)
    return hit / total if total else 0.0


def dice(a: Iterable[str], b: Iterable[str]) -> float:
    """Dice overlap of two term sets (0..1)."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return 2.0 * len(sa & sb) / (len(sa) + len(sb))


def negated(text: str) -> bool:
    """True when `text` carries an odd number of negation cues."""
    tokens = words(text)
    count = sum(1 for w in tokens if w in NEGATIONS or w.endswith("n't"))
    return count % 2 == 1


def directions(text: str) -> set[int]:
    """Which side of each opposite pair the text takes: +i for the first set, -i for the second."""
    tokens = set(words(text))
    found: set[int] = set()
    for i, (up, down) in enumerate(OPPOSITES, start=1):
        if tokens & up and not tokens & down:
            found.add(i)
        elif tokens & down and not tokens & up:
            found.add(-i)
    return found


def contradicts(a: str, b: str) -> bool:
    """Polarity cue check: opposite negation parity, or opposite direction words on one axis."""
    if negated(a) != negated(b):
        return True
    da, db = directions(a), directions(b)
    return any(-d in db for d in da)
