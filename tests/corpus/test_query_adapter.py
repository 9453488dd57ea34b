"""The query adapter: the trained map ships and moves queries, keeps vectors unit length (identity when no
file is there); search applies it by default; batch search = one by one."""

from __future__ import annotations

import asyncio
import contextlib

import numpy as np
import pytest

import research_corpus.search as corpus_search
from research_corpus.errors import CorpusError
from research_corpus.ingest import ingest_path
from research_corpus.query_adapter import ADAPTER_PATH, QueryAdapter, get_query_adapter
from research_corpus.search import query_vectors, search, search_many
from research_platform.settings import CorpusSettings


@pytest.mark.unit
def test_a_missing_adapter_is_the_identity(tmp_path):
    adapter = QueryAdapter.load(tmp_path / "none.npz")
    vectors = np.eye(3, 384, dtype=np.float32)
    assert adapter.identity and adapter.apply(vectors) is vectors


@pytest.mark.unit
def test_adapted_vectors_stay_unit_length_and_move():
    rng = np.random.default_rng(7)
    delta = rng.normal(scale=0.05, size=(384, 384)).astype(np.float32)
    vectors = rng.normal(size=(4, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    adapted = QueryAdapter(delta).apply(vectors)
    assert np.allclose(np.linalg.norm(adapted, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(adapted, vectors)
    assert np.allclose(
        QueryAdapter(delta).apply(vectors[0]), adapted[0], atol=1e-6
    )  # one vector = a row


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


@pytest.mark.unit
def test_the_shipped_adapter_is_trained_and_reorders_a_querys_neighbours():
    adapter = QueryAdapter.load(ADAPTER_PATH)
    assert not adapter.identity, f"no trained adapter at {ADAPTER_PATH}"
    assert adapter.delta.shape == (384, 384) and adapter.delta.dtype == np.float32
    assert "SciFact train split" in adapter.provenance
    rng = np.random.default_rng(15)
    chunks = _unit(rng.normal(size=(300, 384)).astype(np.float32))
    query = _unit(rng.normal(size=384).astype(np.float32))
    plain = np.argsort(-(chunks @ query), kind="stable")
    adapted = np.argsort(-(chunks @ adapter.apply(query)), kind="stable")
    assert not np.array_equal(plain, adapted)  # the map moves the query, so its neighbours reorder
    again = np.argsort(-(chunks @ QueryAdapter.load(ADAPTER_PATH).apply(query)), kind="stable")
    assert np.array_equal(adapted, again)  # a fresh load gives the same ranking
    assert (
        float(adapter.apply(query) @ query) > 0.5
    )  # close to the identity: a nudge, not a new space


class _FixedEmbedder:
    """Returns the same unit vectors for any texts (search's embedding step without the model)."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.vectors[: len(texts)]


@pytest.mark.unit
def test_search_passes_query_vectors_through_the_shipped_adapter_by_default():
    vectors = _unit(np.random.default_rng(4).normal(size=(2, 384)).astype(np.float32))
    embedder = _FixedEmbedder(vectors)
    on = query_vectors(["a", "b"], embedder, CorpusSettings())
    off = query_vectors(["a", "b"], embedder, CorpusSettings(query_adapter=False))
    assert np.array_equal(off, vectors)
    assert np.allclose(on, get_query_adapter().apply(vectors)) and not np.allclose(on, vectors)


@pytest.mark.integration
@pytest.mark.parametrize("adapter_on", [True, False])
async def test_batch_search_returns_what_one_by_one_search_returns(
    empty_corpus, small_corpus, adapter_on
):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    settings = CorpusSettings(query_adapter=adapter_on)
    queries = ["aspirin to prevent coronary attacks", "bacterial gene repression", ""]
    batch = await search_many(empty_corpus, queries, k=5, settings=settings)
    single = []
    for query in queries:
        async with empty_corpus() as session:
            single.append(await search(session, query, k=5, settings=settings))
    assert [[h.external_id for h in hits] for hits in batch] == [
        [h.external_id for h in hits] for hits in single
    ]
    assert (
        batch[0][0].external_id.startswith("aspirin") and batch[1][0].external_id == "crispr-ecoli"
    )
    assert batch[2] == []


@pytest.mark.unit
async def test_a_failing_search_in_a_batch_stops_the_batch_with_its_own_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[str] = []

    async def fake_search(session, query, *args, **kwargs):
        started.append(query)
        if query == "bad":
            raise CorpusError("no such thing")
        await asyncio.sleep(0)
        return []

    @contextlib.asynccontextmanager
    async def sessions():
        yield None

    monkeypatch.setattr(corpus_search, "search", fake_search)
    queries = ["a", "bad", *[f"q{i}" for i in range(50)]]
    with pytest.raises(CorpusError, match="no such thing"):
        await search_many(
            sessions,  # type: ignore[arg-type]  # the patched search never opens a session
            queries,
            mode="lexical",
            settings=CorpusSettings(),
            concurrency=2,
        )
    stopped_at = len(started)
    for _ in range(20):
        await asyncio.sleep(0)
    assert (
        stopped_at == len(started) < len(queries)
    )  # the other worker was stopped, not left searching on
