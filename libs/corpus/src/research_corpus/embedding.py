"""Sentence embeddings for corpus chunks and queries: all-MiniLM-L6-v2 (384-d), offline. The
module callers import: the model (`bundled_model`), the `Embedder` and its runtimes
(`embedder`), and `get_embedder()`, the process-wide embedder behind one micro-batching worker
(`batching`). Layered so no import goes back up: bundled_model ← onnx_export ← embedder ←
batching ← embedding.
"""

from __future__ import annotations

from functools import lru_cache

from research_corpus.batching import MicroBatchingEmbedder
from research_corpus.bundled_model import EMBEDDING_DIM, MODEL_NAME, bundled_model_path
from research_corpus.embedder import (
    BACKENDS,
    PRECISIONS,
    Embedder,
    OnnxEncoder,
    SentenceEncoder,
    TorchEncoder,
    default_threads,
    onnx_available,
)

__all__ = [
    "BACKENDS",
    "EMBEDDING_DIM",
    "MODEL_NAME",
    "PRECISIONS",
    "Embedder",
    "MicroBatchingEmbedder",
    "OnnxEncoder",
    "SentenceEncoder",
    "TorchEncoder",
    "bundled_model_path",
    "default_threads",
    "get_embedder",
    "onnx_available",
]


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The process-wide embedder, configured from `CorpusSettings` (model loads on first use);
    concurrent callers share one micro-batching worker and a vector cache (`batching.py`)."""
    return MicroBatchingEmbedder.configured()
