"""Sentences of an evidence text, and the key their stored vectors are found by.

One definition of a sentence serves both sides: the corpus ingest embeds every sentence of a
paper's text once (`corpus_sentences`, see `sentence_vectors.py`), and the offline engine
(`research_llm.offline`) scores the same spans at run time, so it finds their vectors instead
of embedding them again. Spans keep their character offsets so a quote is always an exact
substring of the text it came from.

The key is a digest of the whitespace-normalised sentence: the tokenizer treats every run of
whitespace as one separator, so texts that differ only in whitespace have the same vector.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

# A sentence ends at . ! ? followed by whitespace and an upper-case letter, digit or bracket,
# unless the period closes a common abbreviation or a single initial.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z0-9(\[\"])")
_ABBREVIATIONS = (
    "e.g.",
    "i.e.",
    "et al.",
    "vs.",
    "fig.",
    "figs.",
    "approx.",
    "dr.",
    "no.",
    "ref.",
    "cf.",
    "ca.",
)
_INITIAL = re.compile(r"(?:^|\s)[A-Z]\.$")


@dataclass(frozen=True, slots=True)
class SentenceSpan:
    """A sentence of an evidence text and where it sits (`text[start:end]`)."""

    index: int
    start: int
    end: int
    text: str


# A research task splits each evidence text three times (its sentences' stored vectors are looked
# up, attached, then scored by the drafter) and evidence recurs across tasks, so the spans of
# recent texts up to abstract size are kept: at most 512 × 8,000 characters (plus their spans).
_CACHED = 512
_CACHED_CHARS = 8_000


def split_sentences(text: str) -> list[SentenceSpan]:
    """Sentences of `text` with their offsets; whitespace around them is not part of a span."""
    if len(text) <= _CACHED_CHARS:
        return list(_split_cached(text))
    return _split(text)


@lru_cache(maxsize=_CACHED)
def _split_cached(text: str) -> tuple[SentenceSpan, ...]:
    return tuple(_split(text))


def _split(text: str) -> list[SentenceSpan]:
    spans: list[SentenceSpan] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        candidate = text[start : match.start()].rstrip()
        if candidate.lower().endswith(_ABBREVIATIONS) or _INITIAL.search(candidate):
            continue
        _append_span(spans, text, start, match.start())
        start = match.end()
    _append_span(spans, text, start, len(text))
    return spans


def _append_span(spans: list[SentenceSpan], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end - start >= 3:
        spans.append(SentenceSpan(index=len(spans), start=start, end=end, text=text[start:end]))


def sentence_key(sentence: str) -> bytes:
    """The 16-byte key of a sentence's stored vector (BLAKE2b of its whitespace-normalised text)."""
    return hashlib.blake2b(" ".join(sentence.split()).encode(), digest_size=16).digest()
