"""Integration: the corpus records which model made its vectors; a search, an ingest or a
sentence-vector lookup with another model is refused (not silently mixed), and `reembed`
converts every vector and the record (real Postgres + pgvector; two text-keyed stand-in models
stand for fp32 and int8, so a stored vector says which model and text it came from)."""

from __future__ import annotations

import asyncio
import hashlib

import numpy as np
import pytest
from sqlalchemy import text

from research_corpus import stamp
from research_corpus.errors import EmbeddingModelMismatch
from research_corpus.ingest import ingest_path
from research_corpus.reembed import reembed
from research_corpus.search import search_many
from research_corpus.sentence_vectors import SentenceVectors
from research_corpus.sentences import sentence_key, split_sentences
from tests.corpus.conftest import SMALL_CORPUS, write_jsonl

pytestmark = pytest.mark.integration


class StandIn:
    """A model whose vector of a text is a unit vector seeded by (model id, text)."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.calls = 0

    def vector(self, item: str) -> np.ndarray:
        seed = hashlib.sha256(f"{self.model_id}|{item}".encode()).digest()[:8]
        row = np.random.default_rng(int.from_bytes(seed, "little")).standard_normal(384)
        return (row / np.linalg.norm(row)).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return (
            np.stack([self.vector(t) for t in texts])
            if texts
            else np.zeros((0, 384), dtype=np.float32)
        )


FP32, INT8 = StandIn("all-MiniLM-L6-v2/fp32"), StandIn("all-MiniLM-L6-v2/int8")


async def _stamp(sessions) -> stamp.Stamp | None:
    async with sessions() as session:
        return await stamp.read(session)


async def _ingest(sessions, tmp_path, model, records=SMALL_CORPUS):
    path = write_jsonl(tmp_path / "papers.jsonl", records)
    return await ingest_path(
        sessions, path, fmt="jsonl", progress=False, sentence_vectors=True, embedder=model
    )


async def test_ingest_stamps_the_corpus_and_refuses_vectors_of_another_model(
    empty_corpus, tmp_path
):
    await _ingest(empty_corpus, tmp_path, FP32)
    assert await _stamp(empty_corpus) == stamp.Stamp("all-MiniLM-L6-v2/fp32")
    changed = [{**SMALL_CORPUS[0], "abstract": "A changed abstract about aspirin."}]
    with pytest.raises(EmbeddingModelMismatch, match="corpus reembed"):
        await _ingest(empty_corpus, tmp_path, INT8, changed)
    async with empty_corpus() as session:  # nothing of the refused ingest was written
        abstract = await session.scalar(
            text("SELECT abstract FROM corpus_papers WHERE external_id = 'aspirin-mi'")
        )
    assert abstract == SMALL_CORPUS[0]["abstract"]


async def test_a_stale_stamp_of_an_emptied_corpus_is_replaced_by_the_next_ingest(
    empty_corpus, tmp_path
):
    async with empty_corpus() as session, session.begin():
        await stamp.write(session, "all-MiniLM-L6-v2/fp32")
    await _ingest(empty_corpus, tmp_path, INT8)  # the corpus holds no vector: no mix possible
    assert await _stamp(empty_corpus) == stamp.Stamp("all-MiniLM-L6-v2/int8")


async def test_search_with_another_model_is_refused_and_reembed_converts_every_vector(
    empty_corpus, tmp_path
):
    await _ingest(empty_corpus, tmp_path, FP32)
    for mode in ("dense", "hybrid"):
        with pytest.raises(EmbeddingModelMismatch, match="embedded with all-MiniLM-L6-v2/fp32"):
            await search_many(empty_corpus, ["aspirin"], mode=mode, embedder=INT8)
    lexical = await search_many(empty_corpus, ["aspirin"], mode="lexical", embedder=INT8)
    assert lexical[0]  # no vector involved: still served
    sentence = split_sentences(SMALL_CORPUS[0]["abstract"])[0].text
    async with empty_corpus() as session:
        assert await SentenceVectors(session).vectors_of([sentence], model=INT8.model_id) == {}
        assert await SentenceVectors(session).vectors_of([sentence], model=FP32.model_id)

    report = await reembed(empty_corpus, INT8)
    assert report.previous == FP32.model_id and report.model == INT8.model_id
    assert report.papers == len(SMALL_CORPUS) and report.orphan_sentences_deleted == 0
    assert await _stamp(empty_corpus) == stamp.Stamp(INT8.model_id)
    async with empty_corpus() as session:
        chunks = (
            await session.execute(
                text(
                    "SELECT p.title, c.text, CAST(c.embedding AS real[]) FROM corpus_chunks c "
                    "JOIN corpus_papers p ON p.id = c.paper_id"
                )
            )
        ).all()
        sentences = {
            bytes(k): v
            for k, v in await session.execute(
                text("SELECT key, CAST(embedding AS real[]) FROM corpus_sentences")
            )
        }
        index = await session.scalar(
            text("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_corpus_chunks_embedding'")
        )
    assert chunks and index == 1
    for title, body, vector in chunks:
        assert np.allclose(  # chunk vectors are half precision (11 significant bits)
            vector, INT8.vector(f"{title} {body}".strip()), rtol=1e-3, atol=1e-4
        )
    expected = {
        sentence_key(s.text): " ".join(s.text.split())
        for p in SMALL_CORPUS
        for s in split_sentences(p["abstract"])
    }
    assert set(sentences) == set(expected)
    for key, vector in sentences.items():
        assert np.allclose(vector, INT8.vector(expected[key]), atol=1e-6)
    hits = await search_many(empty_corpus, ["aspirin"], mode="dense", embedder=INT8)
    assert hits[0]
    with pytest.raises(EmbeddingModelMismatch):
        await search_many(empty_corpus, ["aspirin"], mode="dense", embedder=FP32)
    calls = INT8.calls
    assert (await reembed(empty_corpus, INT8)).skipped and INT8.calls == calls  # already done


async def test_an_interrupted_reembed_is_reported_until_it_is_run_again(empty_corpus, tmp_path):
    await _ingest(empty_corpus, tmp_path, FP32)

    class Crashing(StandIn):
        def embed(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        await reembed(empty_corpus, Crashing(INT8.model_id))
    assert await _stamp(empty_corpus) == stamp.Stamp(FP32.model_id, INT8.model_id)
    for model in (FP32, INT8):  # vectors may be mixed: neither model may search
        with pytest.raises(EmbeddingModelMismatch, match="being re-embedded"):
            await search_many(empty_corpus, ["aspirin"], mode="dense", embedder=model)
    with pytest.raises(EmbeddingModelMismatch):
        await _ingest(empty_corpus, tmp_path, FP32, [{**SMALL_CORPUS[0], "id": "new"}])
    await reembed(empty_corpus, INT8)
    assert await _stamp(empty_corpus) == stamp.Stamp(INT8.model_id)


async def test_reembed_deletes_sentence_vectors_no_paper_holds_any_more(empty_corpus, tmp_path):
    await _ingest(empty_corpus, tmp_path, FP32)
    changed = [{**SMALL_CORPUS[0], "abstract": "An entirely new abstract about aspirin."}]
    await _ingest(empty_corpus, tmp_path, FP32, changed)  # the old sentences stay stored
    report = await reembed(empty_corpus, INT8)
    assert report.orphan_sentences_deleted == len(split_sentences(SMALL_CORPUS[0]["abstract"]))


async def test_workers_starting_together_on_a_stale_stamp_do_not_deadlock(empty_corpus):
    # Both find another model's stamp on an empty corpus and restamp it. Had each taken the row's
    # share lock before asking to update it, each would wait for the other's share lock and
    # PostgreSQL would kill one with "deadlock detected" (two bus ingest workers in the suite).
    async def worker() -> None:
        async with empty_corpus() as session, session.begin():
            await stamp.claim_for_ingest(session, "all-MiniLM-L6-v2/int8")
            await asyncio.sleep(0.05)  # a batch's writes

    for _ in range(5):
        async with empty_corpus() as session, session.begin():
            await stamp.write(session, "all-MiniLM-L6-v2/fp32")
        await asyncio.wait_for(asyncio.gather(worker(), worker()), 30)
        assert await _stamp(empty_corpus) == stamp.Stamp("all-MiniLM-L6-v2/int8")
