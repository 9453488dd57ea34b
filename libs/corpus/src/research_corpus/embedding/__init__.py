"""Sentence embeddings for corpus chunks and queries: all-MiniLM-L6-v2 (384-d), offline.

The package callers import: the model (`model`: its name, size and installed folder), the
`Embedder` and its runtimes (`embedder`; the ONNX graph comes from `research_corpus.onnx_export`,
shared with the judgement models), and `get_embedder()`, the process-wide embedder behind one
micro-batching worker (`batching`). Layered so no import goes back up: model ← embedder ←
batching ← this package, and `research_corpus.onnx_export` below the embedder imports none of
them. An entry point hands the process's corpus settings in once
(`configure_embedder(settings.corpus)`, in its bootstrap) before the first `get_embedder()`;
a process that never does gets the group's defaults. `python -m research_corpus.embedding`
exports the bundled model to the ONNX cache at set-up (`__main__`).
"""

from __future__ import annotations

from functools import lru_cache

from research_corpus.embedding.batching import MicroBatchingEmbedder
from research_corpus.embedding.embedder import (
    BACKENDS,
    PRECISIONS,
    Embedder,
    OnnxEncoder,
    SentenceEncoder,
    TorchEncoder,
    default_threads,
    onnx_available,
)
from research_corpus.embedding.model import EMBEDDING_DIM, MODEL_NAME, bundled_model_path
from research_platform.settings import CorpusSettings

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
    "configure_embedder",
    "default_threads",
    "get_embedder",
    "onnx_available",
]


_configured: list[CorpusSettings] = []  # what the entry point handed in (`configure_embedder`)


def configure_embedder(corpus: CorpusSettings) -> None:
    """Make `corpus` (the process's corpus group) the configuration of the process-wide embedder;
    an embedder built before under other settings is dropped (a test configuring two apps)."""
    if _configured and _configured[0] == corpus:
        return
    _configured[:] = [corpus]
    get_embedder.cache_clear()


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The process-wide embedder, configured from the corpus group `configure_embedder` was
    given (else the group's defaults; the model loads on first use); concurrent callers share
    one micro-batching worker and a vector cache (`batching.py`)."""
    return MicroBatchingEmbedder.configured(_configured[0] if _configured else CorpusSettings())
