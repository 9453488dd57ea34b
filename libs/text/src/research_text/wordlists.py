"""Named word lists read from the package's `words/` folder (pure, cached).

A name is `<kind>.<purpose>` (`stopwords.lexical`, `verbs.relational`): lowercase, the kind one
word, the purpose words joined by underscores. Its file is the name with the dot written as an
underscore (`words/stopwords_lexical.txt`), shipped as package data.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

_NAME = re.compile(r"([a-z]+)\.([a-z][a-z0-9]*(?:_[a-z0-9]+)*)")


class UnknownWordList(LookupError):
    """No word list by that name ships with research_text."""


def _folder() -> Traversable:
    return resources.files("research_text") / "words"


def word_list_names() -> tuple[str, ...]:
    """The name of every list that ships, sorted."""
    stems = (e.name.removesuffix(".txt") for e in _folder().iterdir() if e.name.endswith(".txt"))
    return tuple(sorted(stem.replace("_", ".", 1) for stem in stems))


@cache
def word_list(name: str) -> frozenset[str]:
    """The words of the list `name`, one per non-blank, non-`#` line of its file.

    Raises `UnknownWordList` for a malformed name or one with no file (the message lists those
    that ship).
    """
    if not _NAME.fullmatch(name):
        raise UnknownWordList(f"{name!r} is not a word-list name (<kind>.<purpose>, lowercase)")
    entry = _folder() / f"{name.replace('.', '_', 1)}.txt"
    if not entry.is_file():
        raise UnknownWordList(
            f"no word list {name!r}; the lists are {', '.join(word_list_names())}"
        )
    lines = (line.strip() for line in entry.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))
