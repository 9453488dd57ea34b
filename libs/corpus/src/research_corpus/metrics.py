"""Prometheus metrics of the embedding model, on the metrics port of every process that embeds.

Counted in `Embedder.embed`, i.e. for every call that reaches the model — the micro-batching
worker's batches and the bulk ingest's calls alike; texts answered from the vector cache never
count. Together they tell an operator how much of a process's CPU the model takes and whether
the micro-batches fill:

- `research_embedding_texts` (histogram of texts per model call): `_count` is model calls,
  `_sum` is texts embedded, the buckets show the batch sizes;
- `research_embedding_seconds_total` — wall time inside the model (on a busy machine it includes
  waiting for a core);
- `research_embedding_cpu_seconds_total` — CPU time of the thread that ran the model call. The
  services run the model on one math thread (`OMP_NUM_THREADS=1`), so there it is the model's
  CPU; where torch uses a thread pool (the bulk ingest, a CLI) it counts the calling thread only.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

TEXTS = Histogram(
    "research_embedding_texts",
    "Texts per call that reached the embedding model (count = calls, sum = texts embedded).",
    buckets=(1, 2, 4, 8, 16, 32, 64, 256, 1024),
)
SECONDS = Counter("research_embedding_seconds_total", "Wall time spent inside the embedding model.")
CPU_SECONDS = Counter(
    "research_embedding_cpu_seconds_total",
    "CPU time of the threads that called the embedding model, inside the model.",
)
