"""How close two texts are, lexically and (when an embedder is available) semantically.

The dense half comes from `research_corpus.embedding.get_embedder()` (all-MiniLM-L6-v2 loaded
offline). `TextEncoder` is the seam: tests and the benchmark may pass their own, and when the
corpus embedder cannot be loaded the offline engine runs on the lexical score alone (it says so
in `Relevance.mode`). Scores are rounded so repeated runs produce identical outputs.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np

from research_llm.offline import lexicon

# Sentence vectors kept (float32, ~1.7 kB each with the key): corpus sentences arrive with their
# stored vectors, so this mostly holds outside sources' sentences and questions; 10,000 bounds it
# to ~17 MB (50,000 grew the researcher's RSS by ~80 MB over a long soak for little reuse).
CACHE_SIZE = 10_000


class TextEncoder(Protocol):
    """Anything that turns texts into equal-length vectors (L2-normalised or not)."""

    def encode(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


class _CorpusEncoder:
    """Adapter over the corpus embedder, whatever its method is called. `embedder` is asked for on
    every call (the process's, `get_embedder`), not kept: an entry point that configures the
    embedder again replaces it, and the vectors a service handed to its cache (`remember`) live in
    the current one."""

    def __init__(self, embedder: Callable[[], object]) -> None:
        self._embedder = embedder

    def encode(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        embedder = self._embedder()
        for name in ("embed_documents", "embed_texts", "embed", "encode"):
            method = getattr(embedder, name, None)
            if callable(method):
                vectors: Sequence[Sequence[float]] = method(list(texts))
                return vectors
        raise TypeError(f"{type(embedder).__name__} has no embed/encode method")


_lock = threading.Lock()
_default: TextEncoder | None = None
_loaded = False


def default_encoder() -> TextEncoder | None:
    """The corpus embedder, loaded once; None when it is not installed or cannot load."""
    global _default, _loaded  # noqa: PLW0603 - the process-wide embedder, loaded once under the lock
    with _lock:
        if not _loaded:
            _loaded = True
            try:
                from research_corpus.embedding import get_embedder

                candidate = _CorpusEncoder(get_embedder)
                candidate.encode(["probe"])  # the model loads lazily: prove it loads now
                _default = candidate
            except Exception:  # noqa: BLE001 - no embedder means lexical-only, never a failure
                _default = None
        return _default


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two rows of `Relevance.embed` (already unit length)."""
    return float(np.dot(a, b))


class Relevance:
    """Hybrid scorer of candidate texts against anchor texts.

    `lexical_weight` + `dense_weight` mix idf-weighted term coverage with embedding cosine
    similarity; without an encoder the lexical score is used alone.
    """

    def __init__(
        self, encoder: TextEncoder | None, *, lexical_weight: float = 0.5, dense_weight: float = 0.5
    ) -> None:
        self.encoder = encoder
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.lexical_weight = lexical_weight
        self.dense_weight = dense_weight

    @property
    def mode(self) -> str:
        return "hybrid" if self.encoder is not None else "lexical"

    def embed(
        self, texts: Sequence[str], known_vectors: Mapping[str, Sequence[float]] | None = None
    ) -> np.ndarray | None:
        """Unit-length vectors of `texts` (one row each), or None in lexical mode.

        `known_vectors` are vectors computed earlier by the same model (the corpus stores one per
        sentence at ingest): those texts never reach the model. Evidence sentences also recur
        across tasks, so vectors are kept in a bounded LRU cache and only unseen texts are embedded.
        """
        if self.encoder is None or not texts:
            return None
        with self._cache_lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
        for t in dict.fromkeys(texts):
            if t not in known and known_vectors and t in known_vectors:
                row = np.asarray(known_vectors[t], dtype=np.float32)
                known[t] = row / (np.linalg.norm(row) or 1.0)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            matrix = np.asarray(self.encoder.encode(missing), dtype=np.float64)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            known.update(
                zip(missing, (row.astype(np.float32) for row in matrix / norms), strict=True)
            )
        with self._cache_lock:
            for text in dict.fromkeys(texts):
                self._cache[text] = known[text]
                self._cache.move_to_end(text)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return np.asarray([known[t] for t in texts], dtype=np.float64)

    def mix(self, lexical: float, dense: float | None) -> float:
        """One score in 0..1 from a lexical score and an optional cosine similarity."""
        if dense is None:
            return round(lexical, 6)
        dense01 = max(0.0, round(dense, 4))  # 4 decimals: batch padding never flips a ranking
        total = self.lexical_weight + self.dense_weight
        return round((self.lexical_weight * lexical + self.dense_weight * dense01) / total, 6)

    def similarity(self, a: str, b: str) -> float:
        """Symmetric closeness of two statements (0..1): term overlap mixed with cosine."""
        lexical = lexicon.dice(lexicon.content_terms(a), lexicon.content_terms(b))
        vectors = self.embed([a, b])
        dense = cosine(vectors[0], vectors[1]) if vectors is not None else None
        return self.mix(lexical, dense)
