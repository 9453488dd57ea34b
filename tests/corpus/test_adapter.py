"""The query adapter keeps vectors unit length (identity when no trained map ships); batch search = one by one."""

from __future__ import annotations

import numpy as np
import pytest

from research_corpus.adapter import QueryAdapter
from research_corpus.ingest import ingest_path
from research_corpus.search import search, search_many
from research_platform.settings import CorpusSettings


def test_a_missing_adapter_is_the_identity(tmp_path):
    adapter = QueryAdapter.load(tmp_path / "none.npz")
    vectors = np.eye(3, 384, dtype=np.float32)
    assert adapter.identity and adapter.apply(vectors) is vectors


def test_adapted_vectors_stay_unit_length_and_move():
    rng = np.random.default_rng(7)
    delta = rng.normal(scale=0.05, size=(384, 384)).astype(np.float32)
    vectors = rng.normal(size=(4, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    adapted = QueryAdapter(delta).apply(vectors)
    assert np.allclose(np.linalg.norm(adapted, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(adapted, vectors)
    assert np.allclose(QueryAdapter(delta).apply(vectors[0]), adapted[0], atol=1e-6)  # one vector = a row


@pytest.mark.integration
@pytest.mark.parametrize("adapter_on", [True, False])
async def test_batch_search_returns_what_one_by_one_search_returns(empty_corpus, small_corpus, adapter_on):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    settings = CorpusSettings(query_adapter=adapter_on)
    queries = ["aspirin to prevent coronary attacks", "bacterial gene repression", ""]
    batch = await search_many(empty_corpus, queries, k=5, settings=settings)
    single = []
    for query in queries:
        async with empty_corpus() as session:
            single.append(await search(session, query, k=5, settings=settings))
    assert [[h.external_id for h in hits] for hits in batch] == [[h.external_id for h in hits] for hits in single]
    assert batch[0][0].external_id.startswith("aspirin") and batch[1][0].external_id == "crispr-ecoli"
    assert batch[2] == []
