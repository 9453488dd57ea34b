"""The model's metrics count what reached the model: calls, texts and their sizes, time and CPU in it;
a text answered from the process's vector cache counts nothing."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from research_corpus.embedding import get_embedder
from research_corpus.embedding.batching import MicroBatchingEmbedder

pytestmark = pytest.mark.unit


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_each_model_call_counts_its_texts_and_time():
    embedder = get_embedder()  # the real MiniLM, loaded from the bundled package
    assert isinstance(embedder, MicroBatchingEmbedder)
    calls, texts = sample("research_embedding_texts_count"), sample("research_embedding_texts_sum")
    pairs, seconds = (
        sample("research_embedding_texts_bucket", le="2.0"),
        sample("research_embedding_seconds_total"),
    )
    cpu = sample("research_embedding_cpu_seconds_total")

    embedder.embed_direct(["metrics test: a first text", "metrics test: a second text"])
    embedder.embed(["metrics test: a third text"])
    embedder.embed(["metrics test: a third text"])  # from the cache: never reaches the model

    assert sample("research_embedding_texts_count") - calls == 2
    assert sample("research_embedding_texts_sum") - texts == 3
    assert (
        sample("research_embedding_texts_bucket", le="2.0") - pairs == 2
    )  # both calls had ≤ 2 texts
    assert sample("research_embedding_seconds_total") > seconds
    assert sample("research_embedding_cpu_seconds_total") > cpu
