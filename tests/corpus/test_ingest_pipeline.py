"""Integration: the pipelined ingest (batch k written while batch k+1 is embedded) stores every
text with its own vector, embeds each text once, and an ingest that fails midway resumes where it
stopped (real Postgres + pgvector; the model is replaced by a text-keyed stand-in, so a vector
says which text it was computed from)."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
from sqlalchemy import text

from research_corpus.ingest import ingest_path, progress_bar
from research_corpus.sentences import sentence_key, split_sentences
from tests.corpus.conftest import SMALL_CORPUS, write_jsonl

pytestmark = pytest.mark.integration

SHARED = (
    "The trial was stopped early for benefit."  # in the first and the last paper: embedded once
)
PAPERS = [
    {
        "id": f"paper-{i}",
        "title": f"Trial {i} of drug {chr(65 + i)}",
        "abstract": (SHARED + " " if i in (0, 8) else "")
        + f"We randomly assigned {100 + i} adults to drug {chr(65 + i)} or placebo. "
        f"Drug {chr(65 + i)} reduced the primary outcome by {10 + i} percent over {i + 2} years of follow-up "
        f"in patients with chronic disease number {i}. Adverse events were rare.",
    }
    for i in range(9)
]


def vector_of(item: str) -> np.ndarray:
    """The stand-in model's vector of a text: a unit vector seeded by the text's hash."""
    seed = int.from_bytes(hashlib.sha256(item.encode()).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    return vector / np.linalg.norm(vector)


class TextKeyedModel:
    """Embeds like the real model's interface; remembers every call; can fail on its n-th call."""

    def __init__(self, fail_on_call: int | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_on_call = fail_on_call

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if len(self.calls) == self.fail_on_call:
            raise RuntimeError("the model crashed")
        return (
            np.stack([vector_of(t) for t in texts])
            if texts
            else np.zeros((0, 384), dtype=np.float32)
        )

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


async def _chunks(sessions) -> list[tuple[str, int, str, str, list[float]]]:
    async with sessions() as session:
        rows = await session.execute(
            text(
                """SELECT p.external_id, c.chunk_index, p.title, c.text, CAST(c.embedding AS real[])
               FROM corpus_chunks c JOIN corpus_papers p ON p.id = c.paper_id ORDER BY p.external_id, c.chunk_index"""
            )
        )
        return [tuple(r) for r in rows]


async def _sentences(sessions) -> dict[bytes, list[float]]:
    async with sessions() as session:
        rows = await session.execute(
            text("SELECT key, CAST(embedding AS real[]) FROM corpus_sentences")
        )
        return {bytes(key): vector for key, vector in rows}


def _abstract_sentences(papers: list[dict]) -> dict[bytes, str]:
    return {
        sentence_key(s.text): " ".join(s.text.split())
        for p in papers
        for s in split_sentences(p["abstract"])
    }


async def test_pipelined_batches_store_every_text_with_its_own_vector_and_embed_it_once(
    empty_corpus, tmp_path
):
    path = write_jsonl(tmp_path / "papers.jsonl", PAPERS)
    model = TextKeyedModel()
    report = await ingest_path(
        empty_corpus,
        path,
        fmt="jsonl",
        progress=False,
        sentence_vectors=True,
        embedder=model,
        chunk_words=12,
        batch_papers=2,
    )
    assert len(model.calls) == 5  # 9 papers, 2 a batch: several batches in flight at once
    chunks = await _chunks(empty_corpus)
    assert report.added == 9 and report.chunks == len(chunks) > 9  # several chunks per paper
    for external_id, index, title, body, stored in chunks:
        assert np.allclose(  # chunk vectors are half precision (11 significant bits)
            stored, vector_of(f"{title} {body}"), rtol=1e-3, atol=1e-4
        ), (external_id, index)
    expected = _abstract_sentences(PAPERS)
    stored_sentences = await _sentences(empty_corpus)
    assert set(stored_sentences) == set(expected) and report.sentences == len(expected)
    for key, vector in stored_sentences.items():
        assert np.allclose(vector, vector_of(expected[key]), atol=1e-6), expected[key]
    # every text reached the model once: the shared sentence of batches 1 and 5 too
    assert sorted(model.texts) == sorted(
        [f"{t} {b}" for _, _, t, b, _ in chunks] + list(expected.values())
    )

    # the same rows and vectors as one batch through the model, no pipelining
    await _empty(empty_corpus)
    whole = TextKeyedModel()
    await ingest_path(
        empty_corpus,
        path,
        fmt="jsonl",
        progress=False,
        sentence_vectors=True,
        embedder=whole,
        chunk_words=12,
        batch_papers=256,
    )
    assert len(whole.calls) == 1
    assert await _chunks(empty_corpus) == chunks
    assert await _sentences(empty_corpus) == stored_sentences


async def test_an_ingest_that_fails_midway_keeps_whole_batches_and_the_next_one_finishes_it(
    empty_corpus, tmp_path
):
    path = write_jsonl(tmp_path / "papers.jsonl", PAPERS)
    with pytest.raises(RuntimeError, match="crashed"):
        await ingest_path(
            empty_corpus,
            path,
            fmt="jsonl",
            progress=False,
            sentence_vectors=True,
            embedder=TextKeyedModel(fail_on_call=3),
            chunk_words=12,
            batch_papers=2,
        )
    kept = await _chunks(empty_corpus)
    # batches 1 and 2 were embedded and written; batch 3's embedding failed, nothing after it is stored
    assert sorted({row[0] for row in kept}) == ["paper-0", "paper-1", "paper-2", "paper-3"]

    model = TextKeyedModel()
    report = await ingest_path(
        empty_corpus,
        path,
        fmt="jsonl",
        progress=False,
        sentence_vectors=True,
        embedder=model,
        chunk_words=12,
        batch_papers=2,
    )
    assert (report.added, report.unchanged, report.updated) == (5, 4, 0)
    assert not any(
        t.startswith(("Trial 0 ", "Trial 3 ")) for t in model.texts
    )  # kept papers are not embedded again
    resumed_chunks, resumed_sentences = await _chunks(empty_corpus), await _sentences(empty_corpus)

    await _empty(empty_corpus)
    await ingest_path(
        empty_corpus,
        path,
        fmt="jsonl",
        progress=False,
        sentence_vectors=True,
        embedder=TextKeyedModel(),
        chunk_words=12,
        batch_papers=2,
    )
    assert resumed_chunks == await _chunks(empty_corpus)
    assert resumed_sentences == await _sentences(empty_corpus)

    again = await ingest_path(
        empty_corpus,
        path,
        fmt="jsonl",
        progress=False,
        sentence_vectors=True,
        embedder=(idle := TextKeyedModel()),
        chunk_words=12,
        batch_papers=2,
    )
    assert (again.added, again.unchanged, again.sentences, idle.calls) == (0, 9, 0, [])


async def test_the_progress_bar_shows_papers_done_papers_per_second_and_the_time_left(
    empty_corpus, small_corpus, capsys
):
    await ingest_path(
        empty_corpus, small_corpus, fmt="jsonl", progress=True, embedder=TextKeyedModel()
    )
    bar = capsys.readouterr().err.strip().splitlines()[-1].split("\r")[-1]
    assert f"{len(SMALL_CORPUS)}/{len(SMALL_CORPUS)} papers" in bar and "100%" in bar
    assert "papers/s" in bar and "ETA 00:00" in bar
    assert bar.rstrip("]").endswith("6 chunks")  # sentences are embedded lazily, by default

    await _empty(empty_corpus)
    await ingest_path(
        empty_corpus,
        small_corpus,
        fmt="jsonl",
        progress=True,
        embedder=TextKeyedModel(),
        sentence_vectors=True,
    )
    bar = capsys.readouterr().err.strip().splitlines()[-1].split("\r")[-1]
    assert "6 chunks, 7 sentences" in bar


def test_without_a_known_total_the_bar_still_counts_papers_and_their_rate() -> None:
    out = io.StringIO()
    bar = progress_bar(None, file=out)
    bar.update(3)
    bar.close()
    assert "3/? papers" in out.getvalue() and "papers/s" in out.getvalue()


async def _empty(sessions) -> None:
    async with sessions() as session, session.begin():
        await session.execute(
            text(
                "TRUNCATE corpus_chunks, corpus_papers, corpus_lexemes, corpus_stats, corpus_sentences RESTART IDENTITY CASCADE"
            )
        )
