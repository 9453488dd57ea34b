"""Integration: the ingest stores a vector for every sentence, and the offline engine uses them
instead of embedding corpus text (real Postgres + pgvector, real MiniLM)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sqlalchemy import text

from research_corpus.embedding import get_embedder
from research_corpus.ingest import ingest_path
from research_corpus.sentence_vectors import SentenceVectors
from research_corpus.sentences import sentence_key, split_sentences
from research_llm import EvidenceDoc
from research_llm.offline.engine import OfflineProvider
from research_researcher import experiment
from tests.corpus.conftest import SMALL_CORPUS, write_jsonl

pytestmark = pytest.mark.integration

# Several sentences per abstract, as real abstracts have (the small corpus has one or two).
LONG_PAPERS = [
    {
        "id": "aspirin-trial",
        "title": "Aspirin for the primary prevention of cardiovascular events",
        "abstract": "We randomly assigned 19,114 older adults to aspirin or placebo. Aspirin did not reduce the rate of "
        "cardiovascular disease. Major hemorrhage was more frequent with aspirin. The trial was stopped early.",
    },
    {
        "id": "aspirin-cohort",
        "title": "Long-term aspirin use in a cohort of nurses",
        "abstract": "Regular aspirin use was associated with a lower risk of colorectal cancer. The benefit appeared after "
        "ten years of use. Higher doses were not more protective.",
    },
]


class CountingEncoder:
    """The real MiniLM model, remembering every text that reached it."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return get_embedder().embed_direct(list(texts))  # type: ignore[attr-defined]  # the process embedder is the micro-batching one


async def _papers(sessions) -> list[tuple[str, str, str]]:
    async with sessions() as session:
        rows = await session.execute(
            text("SELECT external_id, title, abstract FROM corpus_papers ORDER BY id")
        )
        return [tuple(row) for row in rows]


def test_sentences_differing_only_in_whitespace_share_a_key() -> None:
    assert sentence_key("Aspirin  reduced\nrisk. ") == sentence_key("Aspirin reduced risk.")
    assert sentence_key("Aspirin reduced risk.") != sentence_key("Aspirin raised risk.")


async def test_ingest_stores_each_sentence_vector_once_and_a_reingest_embeds_nothing(
    empty_corpus, tmp_path
):
    path = write_jsonl(tmp_path / "papers.jsonl", SMALL_CORPUS + LONG_PAPERS)
    report = await ingest_path(
        empty_corpus, path, fmt="jsonl", progress=False, sentence_vectors=True
    )
    sentences = [
        span.text
        for _, _, abstract in await _papers(empty_corpus)
        for span in split_sentences(abstract)
    ]
    assert len(sentences) == 14  # 7 in the small corpus, 4 + 3 in the long papers
    assert report.sentences == len(set(sentences))
    async with empty_corpus() as session:
        stored = await SentenceVectors(session).vectors_of(sentences)
    assert set(stored) == set(sentences)
    # the stored vector is the model's vector of that sentence
    direct = get_embedder().embed_direct(sentences[:3])
    assert all(
        float(np.dot(stored[s], row)) > 0.999 for s, row in zip(sentences[:3], direct, strict=True)
    )

    again = await ingest_path(
        empty_corpus, path, fmt="jsonl", progress=False, sentence_vectors=True
    )
    assert (again.unchanged, again.sentences) == (len(SMALL_CORPUS + LONG_PAPERS), 0)


async def test_a_lazy_ingest_embeds_chunks_only_and_a_later_one_fills_the_sentence_vectors(
    empty_corpus, small_corpus
):
    first = await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    assert first.added == len(SMALL_CORPUS) and first.chunks > 0 and first.sentences == 0
    async with empty_corpus() as session:
        assert await session.scalar(text("SELECT count(*) FROM corpus_sentences")) == 0

    report = await ingest_path(
        empty_corpus, small_corpus, fmt="jsonl", progress=False, sentence_vectors=True
    )
    assert (report.added, report.updated, report.unchanged, report.chunks) == (
        0,
        0,
        len(SMALL_CORPUS),
        0,
    )
    assert report.sentences == 7  # every sentence of the small corpus, embedded now
    sentences = [
        span.text
        for _, _, abstract in await _papers(empty_corpus)
        for span in split_sentences(abstract)
    ]
    async with empty_corpus() as session:
        assert set(await SentenceVectors(session).vectors_of(sentences)) == set(sentences)


async def test_the_offline_engine_embeds_only_the_question_when_the_corpus_knows_the_sentences(
    empty_corpus, tmp_path
):
    await ingest_path(
        empty_corpus,
        write_jsonl(tmp_path / "papers.jsonl", LONG_PAPERS + SMALL_CORPUS),
        fmt="jsonl",
        progress=False,
        sentence_vectors=True,
    )
    docs = [
        EvidenceDoc(source_id=f"corpus:{ext}", title=title, text=abstract, score=1.0 / (1 + i))
        for i, (ext, title, abstract) in enumerate(await _papers(empty_corpus))
    ]
    outside = EvidenceDoc(
        source_id="pmid:1",
        title="Aspirin and bleeding",
        text="Aspirin doubled gastrointestinal bleeding.",
    )
    question = "Does aspirin prevent cardiovascular disease in older adults?"
    async with empty_corpus() as session:
        vectors = await SentenceVectors(session).vectors_of(
            experiment.evidence_sentences([*docs, outside])
        )
    known = experiment.with_sentence_vectors([*docs, outside], vectors)

    with_store = CountingEncoder()
    draft = OfflineProvider(with_store).draft_sync(question, None, known)
    assert with_store.texts == [question, outside.text]  # the outside sentence was never ingested

    without_store = CountingEncoder()
    same = OfflineProvider(without_store).draft_sync(question, None, [*docs, outside])
    assert len(without_store.texts) == len(experiment.evidence_sentences(docs)) + 2
    assert draft == same  # the stored vectors change the cost, not the claim
    assert "aspirin" in draft.statement.lower() and draft.supports
