"""Sentence spans: the spans of a recent text are kept, and every caller still gets its own list
with exactly the spans of a fresh split — long texts (a PDF section) are never kept."""

from __future__ import annotations

import pytest

from research_corpus import sentences
from research_corpus.sentences import split_sentences

pytestmark = pytest.mark.unit

ABSTRACT = (
    "Vitamin D was given to 120 adults (e.g. in winter) for 12 weeks. Bone density rose by 3%. "
    "Dr. Smith et al. found no effect in children! Is that surprising? A. B. Jones disagreed."
)


def test_a_kept_text_gives_the_spans_of_a_fresh_split_in_a_list_of_its_own():
    fresh = sentences._split(ABSTRACT)
    first = split_sentences(ABSTRACT)
    first.append(first[0])  # a caller that changes its list changes no one else's
    second = split_sentences(ABSTRACT)
    assert second == fresh
    assert [s.text for s in second] == [
        "Vitamin D was given to 120 adults (e.g. in winter) for 12 weeks.",
        "Bone density rose by 3%.",
        "Dr. Smith et al. found no effect in children!",
        "Is that surprising?",
        "A. B. Jones disagreed.",
    ]
    assert all(ABSTRACT[s.start : s.end] == s.text for s in second)


def test_only_texts_up_to_abstract_size_are_kept():
    sentences._split_cached.cache_clear()
    long_text = " ".join(f"Sentence number {i} of a long section." for i in range(400))
    assert len(long_text) > sentences._CACHED_CHARS
    assert len(split_sentences(long_text)) == 400
    split_sentences(ABSTRACT)
    split_sentences(ABSTRACT)
    info = sentences._split_cached.cache_info()
    assert (info.currsize, info.hits) == (1, 1)
