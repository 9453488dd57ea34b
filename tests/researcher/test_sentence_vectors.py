"""The researcher hands the offline engine the stored vectors of its evidence sentences: no
sentence the corpus knows reaches the model at run time (real NATS, Postgres, MiniLM)."""

from __future__ import annotations

import nats
import numpy as np
import pytest
from sqlalchemy import text

from research_contracts import RunResearch, SourceHit, Tier
from research_corpus.embedding import Embedder, get_embedder
from research_corpus.sentence_vectors import SentenceVectors
from research_corpus.sentences import sentence_key, split_sentences
from research_researcher.prepare import guard_question
from tests.researcher.conftest import publish_task, wait_for_claims
from tests.researcher.fakes import FakeConnector

pytestmark = pytest.mark.integration


def _hits(unique: str) -> tuple[SourceHit, SourceHit]:
    # `unique` keeps every sentence out of the process's vector caches filled by earlier tests.
    corpus = SourceHit(
        source_id=f"corpus:sv-{unique}",
        source="corpus",
        year=2019,
        title="Teriparatide and vertebral fractures",
        abstract=(
            f"Teriparatide reduced new vertebral fractures by 65% in trial {unique}. Back pain was less frequent "
            f"with teriparatide. Hypercalcaemia occurred in 3% of patients in cohort {unique}."
        ),
    )
    # The outside sentence is this test's own but fixed: a random token in it moved the relevance model's
    # P(on the question) across the researcher's cut for about 1 draw in 25 (0.25-0.89 over 200 draws),
    # and a paper off the question is never embedded. This wording is at 0.89. Nothing stores it.
    outside = SourceHit(
        source_id=f"pmid:sv-{unique}",
        source="pubmed",
        year=2021,
        title="Teriparatide in men",
        abstract="Teriparatide reduced vertebral fractures in men of the outside study.",
    )
    return corpus, outside


async def test_no_stored_sentence_reaches_the_model(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str, monkeypatch
) -> None:
    corpus, outside = _hits(unique)
    stored = [span.text for span in split_sentences(corpus.abstract)]
    async with (
        sessions() as session,
        session.begin(),
    ):  # what the ingest stores for the corpus paper
        await SentenceVectors(session).keep(
            [sentence_key(s) for s in stored],
            get_embedder().embed_direct(stored),  # type: ignore[attr-defined]  # the process embedder is the micro-batching one
        )
    connector.hits_for = lambda _request: [corpus, outside]
    embedded: list[str] = []
    model_embed = Embedder.embed

    def counting(self: Embedder, texts: list[str]):
        embedded.extend(texts)
        return model_embed(self, texts)

    monkeypatch.setattr(
        Embedder, "embed", counting
    )  # every text the micro-batching worker gives the model
    task = RunResearch(
        question="Does teriparatide reduce vertebral fractures?",
        entity=f"teriparatide {unique}",
        tier=Tier.priority,
    )
    async with start_researcher():
        await publish_task(nc, task)
        [claim] = await wait_for_claims(sessions, [task.task_id])

    assert claim.supports and "teriparatide" in claim.statement.lower()
    assert not set(stored) & set(embedded)
    assert (
        outside.abstract in embedded
    )  # an outside source's sentence is still embedded (and counted)


async def test_a_task_embeds_one_text_its_topic(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str, monkeypatch
) -> None:
    """Memory, the corpus search, the offline draft and the stored claim share one vector, the
    topic's. The question in the model's words, which differs from the topic only by a
    placeholder here, never reaches the model."""
    corpus, _ = _hits(unique)
    connector.hits_for = lambda _request: [corpus]
    embedded: list[str] = []
    model_embed = Embedder.embed

    def counting(self: Embedder, texts: list[str]):
        embedded.extend(texts)
        return model_embed(self, texts)

    monkeypatch.setattr(Embedder, "embed", counting)
    question = f"Is it true that teriparatide lowers vertebral fracture incidence in older women of cohort {unique}?"
    guarded = guard_question(question)
    assert (
        guarded.model_question != guarded.topic_query
    )  # the unknown token is a placeholder in one, gone in the other
    task = RunResearch(question=question, entity=f"teriparatide {unique}", tier=Tier.priority)
    async with start_researcher():
        await publish_task(nc, task)
        [claim] = await wait_for_claims(sessions, [task.task_id])

    assert claim.supports
    assert guarded.model_question not in embedded
    assert (
        embedded.count(guarded.topic_query) <= 1
    )  # once, or not at all when an earlier test embedded it
    expected = get_embedder().embed_direct([guarded.topic_query])[0]  # type: ignore[attr-defined]  # the process embedder is the micro-batching one
    [request] = [r for r in connector.requests if r.query == guarded.topic_query]
    assert request.query_embedding is not None
    assert np.allclose(request.query_embedding, expected, atol=1e-5)  # the corpus search reuses it
    async with sessions() as session:
        stored = await session.scalar(
            text("SELECT CAST(embedding AS real[]) FROM memory_claims WHERE id = :id"),
            {"id": claim.id},
        )
    assert np.allclose(stored, expected, atol=1e-5)


async def test_the_first_task_that_reads_a_paper_stores_its_sentence_vectors_for_the_next(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str, monkeypatch
) -> None:
    """A lazily ingested corpus (no sentence vectors): the first task embeds the paper's sentences
    and stores the model's vectors; the next task reading the paper embeds none of them."""
    corpus, outside = _hits(unique)
    stored = [span.text for span in split_sentences(corpus.abstract)]
    connector.hits_for = lambda _request: [corpus, outside]
    embedded: list[str] = []
    model_embed = Embedder.embed

    def counting(self: Embedder, texts: list[str]):
        embedded.extend(texts)
        return model_embed(self, texts)

    monkeypatch.setattr(Embedder, "embed", counting)
    first, second = (
        RunResearch(question=question, entity=f"teriparatide {unique} {n}", tier=Tier.priority)
        for n, question in enumerate(
            (
                "Does teriparatide reduce vertebral fractures?",
                "Is teriparatide followed by less back pain?",
            )
        )
    )
    async with start_researcher():
        await publish_task(nc, first)
        await wait_for_claims(sessions, [first.task_id])
        async with sessions() as session:
            found = await SentenceVectors(session).vectors_of([*stored, outside.abstract])
        assert set(found) == set(stored)  # the corpus paper's sentences; never the outside one's
        direct = get_embedder().embed_direct(stored)  # type: ignore[attr-defined]  # the process embedder is the micro-batching one
        assert all(
            float(np.dot(found[s], row)) > 0.999 for s, row in zip(stored, direct, strict=True)
        )
        embedded.clear()
        await publish_task(nc, second)
        await wait_for_claims(sessions, [second.task_id])
    assert not set(stored) & set(embedded)
