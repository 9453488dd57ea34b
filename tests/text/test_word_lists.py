"""The named word lists: each file ships and reads as the set its users had inline, and a name
that is not a list is refused with the names that are."""

from __future__ import annotations

from importlib import resources

import pytest

from research_text import UnknownWordList, word_list, word_list_names

pytestmark = pytest.mark.unit


def test_every_shipped_file_is_a_named_list() -> None:
    shipped = word_list_names()
    assert shipped == tuple(sorted(shipped))
    assert {
        "stopwords.coverage",
        "stopwords.lexical",
        "stopwords.names",
        "stopwords.offline",
        "stopwords.reports",
        "stopwords.review_key",
        "verbs.relational",
        "labels.identifier",
        "particles.names",
    } <= set(shipped)
    for name in shipped:
        listed = word_list(name)
        assert listed, name
        assert all(w == w.strip() and w and not w.startswith("#") for w in listed), name


def test_a_list_reads_its_lines_without_comments_or_blanks() -> None:
    text = (resources.files("research_text") / "words" / "stopwords_review_key.txt").read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert word_list("stopwords.review_key") == frozenset(lines)
    assert len(lines) == 27
    assert {"and", "why", "with"} <= word_list("stopwords.review_key")
    assert "#" not in "".join(word_list("stopwords.review_key"))


def test_lists_keep_what_their_modules_held() -> None:
    assert len(word_list("stopwords.lexical")) == 135
    assert len(word_list("stopwords.coverage")) == 53
    assert len(word_list("stopwords.offline")) == 23
    assert len(word_list("stopwords.reports")) == 152
    assert len(word_list("stopwords.names")) == 68
    assert len(word_list("verbs.relational")) == 108
    assert "the" in word_list("stopwords.lexical")
    assert "patients" in word_list("stopwords.offline")
    assert "patients" not in word_list("stopwords.lexical")
    assert {"DOB", "MRN"} <= word_list("labels.identifier")  # the case a list is written in stays


def test_an_unknown_or_malformed_name_is_refused() -> None:
    with pytest.raises(UnknownWordList, match=r"stopwords\.lexical"):
        word_list("stopwords.missing")
    with pytest.raises(UnknownWordList, match="not a word-list name"):
        word_list("../pyproject")
    with pytest.raises(UnknownWordList, match="not a word-list name"):
        word_list("Stopwords.lexical")
