"""The former offline passage classifier: claim × evidence sentence → SUPPORT / CONTRADICT / NEI.

No production path calls it any more: the verifier, the critic and the replicator ask the trained
cross-encoders (`research_verification.evidence`, `research_judgement`). It stays for
`bench/verify.py --model classifier` (the comparison the swap is judged by) until it is deleted.

Trained on the SciFact **train** split only (`scripts/train_verifier.py` reproduces the shipped
`weights/passage_classifier.npz`; licence and attribution in `weights/LICENSE.md`). Features are
the all-MiniLM-L6-v2 embeddings of claim `u` and sentence `v` combined as `[u, v, |u-v|, u*v]`
(the InferSent recipe) plus `lexical.FEATURE_NAMES` (negation, direction of change, numbers,
overlap). The model is a small numpy network (one hidden ReLU layer, or none: a softmax
regression) whose weights load from the `.npz` with no scikit-learn at inference time.

Side effects: the first call embeds with the process-wide MiniLM model, which loads lazily
(`research_corpus.embedding.get_embedder`, HF_HUB_OFFLINE=1, no network).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from research_verification.errors import WeightsUnavailable
from research_verification.lexical import lexical_features
from research_verification.passages import LABELS, SentencePrediction

WEIGHTS = Path(__file__).parent / "weights" / "passage_classifier.npz"


class SentenceEmbedder(Protocol):
    def embed(self, texts: list[str]) -> np.ndarray: ...


def pair_features(
    claim_vec: np.ndarray, sentence_vecs: np.ndarray, claim: str, sentences: Sequence[str]
) -> np.ndarray:
    """The (n, 4*384 + lexical) feature matrix of one claim against n sentences."""
    u = np.broadcast_to(claim_vec.reshape(1, -1), sentence_vecs.shape)
    v = sentence_vecs
    lexical = np.stack([lexical_features(claim, s) for s in sentences]) if len(sentences) else None
    dense = np.hstack([u, v, np.abs(u - v), u * v]).astype(np.float32)
    if lexical is None:
        return np.zeros((0, dense.shape[1] + len(lexical_features("", ""))), dtype=np.float32)
    return np.hstack([dense, lexical])


class PassageClassifier:
    """Softmax over the pair features; `hidden` layers are ReLU (none = logistic regression).

    `thresholds` are the abstract-level decision constants tuned by cross-validation on
    SciFact train (see `abstracts.abstract_label`), shipped in the same file as the weights.
    """

    def __init__(
        self,
        mean: np.ndarray,
        scale: np.ndarray,
        layers: list[tuple[np.ndarray, np.ndarray]],
        thresholds: dict[str, float] | None = None,
        embedder: SentenceEmbedder | None = None,
    ) -> None:
        self.mean, self.scale, self.layers = mean, scale, layers
        self.thresholds = dict(thresholds or {})
        self._embedder = embedder

    @classmethod
    def load(cls, path: str | Path | None = None, embedder: SentenceEmbedder | None = None) -> PassageClassifier:
        path = Path(path) if path else WEIGHTS
        if not path.exists():
            raise WeightsUnavailable(f"no passage classifier weights at {path}")
        with np.load(path, allow_pickle=False) as data:
            n_layers = int(data["n_layers"])
            layers = [(data[f"W{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32)) for i in range(n_layers)]
            names = [str(n) for n in data["threshold_names"]]
            thresholds = dict(zip(names, (float(x) for x in data["threshold_values"]), strict=True))
            return cls(data["mean"], data["scale"], layers, thresholds, embedder)

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {
            "mean": self.mean.astype(np.float32),
            "scale": self.scale.astype(np.float32),
            "n_layers": np.asarray(len(self.layers)),
            "threshold_names": np.asarray(sorted(self.thresholds)),
            "threshold_values": np.asarray([self.thresholds[k] for k in sorted(self.thresholds)], dtype=np.float64),
        }
        for i, (w, b) in enumerate(self.layers):
            # float16 halves the shipped file; the loss of precision is far below the model's noise.
            arrays[f"W{i}"], arrays[f"b{i}"] = w.astype(np.float16), b.astype(np.float32)
        np.savez_compressed(path, **arrays)

    @property
    def embedder(self) -> SentenceEmbedder:
        if self._embedder is None:
            from research_corpus.embedding import get_embedder

            self._embedder = get_embedder()
        return self._embedder

    def predict_features(self, features: np.ndarray) -> np.ndarray:
        """Class probabilities (n, 3) in `LABELS` order for precomputed `pair_features` rows."""
        h = (features - self.mean) / self.scale
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        h = h - h.max(axis=1, keepdims=True)
        p = np.exp(h)
        return p / p.sum(axis=1, keepdims=True)

    def predict_vectors(
        self, claim_vec: np.ndarray, sentence_vecs: np.ndarray, claim: str, sentences: Sequence[str]
    ) -> np.ndarray:
        """Probabilities (n, 3) when the caller already holds the embeddings (e.g. from pgvector)."""
        return self.predict_features(pair_features(claim_vec, sentence_vecs, claim, sentences))

    def predict_proba(
        self, claim: str, sentences: Sequence[str], known: Mapping[str, Sequence[float]] | None = None
    ) -> np.ndarray:
        """Probabilities (n, 3) in `LABELS` order; embeds the claim and the sentences, except the
        sentences `known` already holds a vector of (e.g. the corpus's stored sentence vectors)."""
        if not sentences:
            return np.zeros((0, 3), dtype=np.float32)
        known = known or {}
        missing = list(dict.fromkeys(s for s in sentences if s not in known))
        fresh = dict(zip([claim, *missing], self.embedder.embed([claim, *missing]), strict=True))
        rows = [fresh[s] if s in fresh else np.asarray(known[s], dtype=np.float32) for s in sentences]
        return self.predict_vectors(fresh[claim], np.stack(rows), claim, sentences)

    def classify(self, claim: str, sentences: Sequence[str]) -> list[SentencePrediction]:
        """Each sentence with its most probable label."""
        probs = self.predict_proba(claim, sentences)
        return [
            SentencePrediction(s, LABELS[int(np.argmax(p))], float(p[0]), float(p[1]), float(p[2]))
            for s, p in zip(sentences, probs, strict=True)
        ]


@lru_cache(maxsize=1)
def get_classifier() -> PassageClassifier:
    """The process-wide classifier with the shipped weights (loads in milliseconds)."""
    return PassageClassifier.load()
