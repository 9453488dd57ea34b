"""The query adapter: a learned linear map over MiniLM query vectors, applied before dense kNN.

    adapted(q) = normalise(q + q · D)        D: 384×384, stored as float16 (~0.3 MB)

Only queries pass through it; the corpus's chunk vectors stay plain MiniLM, so the adapter can
be switched on or off (or retrained) without re-embedding anything. It was trained by
`bench/retrieval_adapter.py` on the SciFact TRAIN split only (claims → relevant abstracts,
CC BY-NC 2.0, see data/ATTRIBUTION.md); the file's `provenance` says with what settings.
It ships inside the package: nothing is downloaded. When the file is absent the identity is used.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

ADAPTER_PATH = Path(__file__).resolve().parent / "data" / "query_adapter.npz"


class QueryAdapter:
    """Maps a query's unit vector into the space its relevant chunks are closest in."""

    def __init__(self, delta: np.ndarray | None, provenance: str = "identity") -> None:
        self.delta = None if delta is None else np.asarray(delta, dtype=np.float32)
        self.provenance = provenance

    @classmethod
    def load(cls, path: Path = ADAPTER_PATH) -> QueryAdapter:
        """The adapter stored at `path`, or the identity when there is none."""
        if not path.exists():
            return cls(None)
        with np.load(path) as stored:
            return cls(stored["delta"], str(stored["provenance"]))

    @property
    def identity(self) -> bool:
        return self.delta is None

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Adapt (n, 384) or (384,) query vectors; rows stay unit length."""
        if self.delta is None:
            return vectors
        vectors = np.asarray(vectors, dtype=np.float32)
        adapted = vectors + vectors @ self.delta
        norms = np.linalg.norm(adapted, axis=-1, keepdims=True)
        unit: np.ndarray = adapted / np.maximum(norms, 1e-12)
        return unit


@lru_cache(maxsize=1)
def get_query_adapter() -> QueryAdapter:
    """The process-wide adapter (loaded once, from the package's data folder)."""
    return QueryAdapter.load()
