"""One embedding worker per process: texts from concurrent tasks are embedded together.

MiniLM embeds a batch of 32 short texts about 2-3 times faster per text than one at a time, but
each task of the pipeline only has one or two texts to embed (its question, a claim). So every
caller — any thread, any coroutine — puts its texts on one queue; a single worker thread takes
whatever arrived within `window_s` (up to `max_batch` texts), embeds it as one batch and hands
each caller its rows. A lone caller waits at most `window_s` extra; under load the batches fill.
(Waiting only after a batch that merged several callers saved a lone search ~4 ms but cost
`bench:pipeline` ~7 %: 12.5 vs 13.4 tasks/s, two runs each.)

Vectors are also kept in a bounded LRU keyed by the text, so a text is embedded once per
process: the researcher's question serves memory recall, the offline drafter and the claim,
and a vector computed elsewhere can be handed in with `remember` (the connector receives the
researcher's query vector, so corpus search does not embed the query again).

`MicroBatchingEmbedder` is an `Embedder` (same `embed` / `embed_one`), which is what
`get_embedder()` returns; `embed_direct` bypasses the worker (bulk ingest already batches).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future

import numpy as np

from research_corpus.embedding.embedder import Embedder

# Vectors kept (384 float32 = 1.5 kB each): the reuse is within a task (its question serves
# recall, search, the draft and the claim) or across a few concurrent ones, so 4,096 (~7 MB)
# is plenty; questions rarely recur, and a larger cache only grows the process over a long run.
CACHE_SIZE = 4_096


class MicroBatchingEmbedder(Embedder):
    """An `Embedder` whose calls are merged across callers by one worker thread (see module doc)."""

    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 64,
        *,
        window_s: float = 0.004,
        max_batch: int = 64,
        cache_size: int = CACHE_SIZE,
        backend: str = "onnx",
        threads: int | None = None,
        cache_dir: str | None = None,
        precision: str = "fp32",
    ) -> None:
        super().__init__(
            model_path,
            batch_size=batch_size,
            backend=backend,
            threads=threads,
            cache_dir=cache_dir,
            precision=precision,
        )
        self.window_s = window_s
        self.max_batch = max_batch
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._requests: queue.SimpleQueue[tuple[list[str], Future[np.ndarray]]] = (
            queue.SimpleQueue()
        )
        self._worker: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.batches = 0  # batches the worker embedded (for benchmarks and tests)
        self.embedded = 0  # texts that reached the model

    # --- the Embedder interface -------------------------------------------------------------
    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length (n, 384) float32 rows of `texts`, from the cache or the shared worker."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.submit(texts).result()

    def embed_one(self, text: str) -> list[float]:
        vector: list[float] = self.embed([text])[0].tolist()
        return vector

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """`embed` for coroutines: waits on the worker without holding a thread of its own."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return await asyncio.wrap_future(self.submit(list(texts)))

    async def aembed_one(self, text: str) -> list[float]:
        vector: list[float] = (await self.aembed([text]))[0].tolist()
        return vector

    def embed_direct(self, texts: list[str]) -> np.ndarray:
        """The model, called right here (no queue, no cache)."""
        return super().embed(texts)

    def forget(self) -> None:
        """Empty the vector cache (benchmarks that time embedding, not the cache, between runs)."""
        with self._cache_lock:
            self._cache.clear()

    def remember(self, text: str, vector: Sequence[float]) -> None:
        """Keep a vector of `text` computed elsewhere (same model), so it is never embedded here."""
        row = np.asarray(vector, dtype=np.float32)
        if row.shape != (self.dim,):
            return
        with self._cache_lock:
            self._keep(text, row)

    # --- queue and worker --------------------------------------------------------------------
    def submit(self, texts: list[str]) -> Future[np.ndarray]:
        """A future of the rows of `texts`; only texts missing from the cache reach the worker."""
        done: Future[np.ndarray] = Future()
        with self._cache_lock:
            rows = [self._cache.get(t) for t in texts]
            for t, row in zip(texts, rows, strict=True):
                if row is not None:
                    self._cache.move_to_end(t)
        missing = list(dict.fromkeys(t for t, row in zip(texts, rows, strict=True) if row is None))
        if not missing:
            done.set_result(np.stack(rows))  # type: ignore[arg-type]  # no row is None here: none missing
            return done
        pending: Future[np.ndarray] = Future()
        self._ensure_worker()
        self._requests.put((missing, pending))

        def assemble(finished: Future[np.ndarray]) -> None:
            # The caller may have given up (a recall timeout cancels its wrapped future): its
            # rows are cached anyway, and setting a cancelled future would raise in the worker.
            if not done.set_running_or_notify_cancel():
                return
            error = finished.exception()
            if error is not None:
                done.set_exception(error)
                return
            fresh = dict(zip(missing, finished.result(), strict=True))
            done.set_result(
                np.stack(
                    [
                        row if row is not None else fresh[t]
                        for t, row in zip(texts, rows, strict=True)
                    ]
                )
            )

        pending.add_done_callback(assemble)
        return done

    def _ensure_worker(self) -> None:
        if self._worker is not None:
            return
        with self._start_lock:
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name="embedding-worker", daemon=True
                )
                self._worker.start()

    def _work(self) -> None:
        while True:
            batch = [self._requests.get()]
            size = len(batch[0][0])
            # Take what is already waiting, then wait up to the window for more callers.
            deadline = time.monotonic() + self.window_s
            while size < self.max_batch:
                remaining = deadline - time.monotonic()
                try:
                    item = (
                        self._requests.get_nowait()
                        if remaining <= 0
                        else self._requests.get(timeout=remaining)
                    )
                except queue.Empty:
                    break
                batch.append(item)
                size += len(item[0])
            self._run(batch)

    def _run(self, batch: list[tuple[list[str], Future[np.ndarray]]]) -> None:
        texts = list(dict.fromkeys(t for request, _ in batch for t in request))
        try:
            matrix = super().embed(texts)
        except Exception as exc:  # noqa: BLE001 - every caller of the batch gets the error
            for _, future in batch:
                future.set_exception(exc)
            return
        self.batches += 1
        self.embedded += len(texts)
        vectors = dict(zip(texts, matrix, strict=True))
        with self._cache_lock:
            for text, row in vectors.items():
                self._keep(text, row)
        for request, future in batch:
            future.set_result(np.stack([vectors[t] for t in request]))

    def _keep(self, text: str, row: np.ndarray) -> None:
        self._cache[text] = row
        self._cache.move_to_end(text)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
