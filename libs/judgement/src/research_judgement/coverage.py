"""How much of a question's vocabulary a paper uses: the relevance model's second feature.

The relevance cross-encoder reads 128 tokens and rates some papers on topic that share no
word of substance with the question (an assessment of frail older people, P 0.84, for "exercise
training improves quality of life in chronic heart failure"). `coverage` is the share of the
question's content words, weighted by their inverse document frequency in SciFact's 5,183
abstracts (`weights/document_frequency.json.gz`), that occur in the paper's title or text: a
rare word ("failure", "ALDH1") weighs much more than a common one ("patients"). The shipped
calibration combines it with the model's logit (`Judge.relevance`), fitted on held-out train
claims (`scripts/train_judgement.py --only gate`).
"""

from __future__ import annotations

import gzip
import json
import math
import re
from functools import lru_cache
from pathlib import Path

from research_text import word_list

WORD = re.compile(r"[a-z][a-z0-9-]+")
STOP = word_list("stopwords.coverage")
SUFFIXES = ("ies", "es", "s", "ing", "ed", "ly")


def stem(word: str) -> str:
    """A crude plural / tense stem, so "improves" and "improved" count as one word."""
    for suffix in SUFFIXES:
        if len(word) > 5 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> set[str]:
    return {stem(w) for w in WORD.findall(text.lower())}


def content_terms(question: str) -> set[str]:
    """The stems of `question`'s words without function words."""
    return {stem(w) for w in WORD.findall(question.lower()) if w not in STOP}


class Vocabulary:
    """Document frequencies of stemmed words over a corpus of `documents` texts."""

    def __init__(self, frequencies: dict[str, int], documents: int) -> None:
        self.frequencies = frequencies
        self.documents = documents

    @classmethod
    def of(cls, texts: list[str], min_df: int = 2) -> Vocabulary:
        counts: dict[str, int] = {}
        for text in texts:
            for term in terms(text):
                counts[term] = counts.get(term, 0) + 1
        return cls({t: n for t, n in counts.items() if n >= min_df}, len(texts))

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        data = json.loads(gzip.decompress(path.read_bytes()))
        return cls(data["frequencies"], int(data["documents"]))

    def save(self, path: Path) -> None:
        data = {"documents": self.documents, "frequencies": dict(sorted(self.frequencies.items()))}
        path.write_bytes(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0))

    def idf(self, term: str) -> float:
        return math.log((self.documents + 1) / (self.frequencies.get(term, 1) + 1))

    def specificity(self, word: str) -> float:
        """How rare `word` is in the literature, in [0, 1]: its IDF over the largest possible
        ("patients" 0.2, "exercise" 0.54, "netosis" 0.86) — a name built of rare words says more."""
        return self.idf(stem(word.lower())) / math.log((self.documents + 1) / 2)

    def rarest(self, question: str) -> str | None:
        """The stem of `question`'s content word the literature uses least (highest IDF): what a
        paper on the question can hardly leave unnamed ("ppm1d" in "Activation PPM1D enhances p53
        function"); None for a question without content words."""
        return max(sorted(content_terms(question)), key=self.idf, default=None)

    def coverage(self, question: str, text: str) -> float:
        """The IDF-weighted share of `question`'s content words found in `text`, in [0, 1]."""
        wanted = content_terms(question)
        total = sum(self.idf(t) for t in wanted)
        if total <= 0:
            return 0.0
        have = terms(text)
        return sum(self.idf(t) for t in wanted if t in have) / total


FILE = "document_frequency.json.gz"  # beside the models in the weights folder
SHIPPED = Path(__file__).parent / "weights" / FILE


@lru_cache(maxsize=4)
def vocabulary(path: Path = SHIPPED) -> Vocabulary:
    """The document frequencies at `path`; by default the shipped SciFact ones."""
    return Vocabulary.load(path)
