"""The critic's stance check reads its quotes' vectors from `corpus_sentences` (one query) instead
of embedding them; a failed lookup falls back to embedding (real Postgres, MiniLM)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from research_corpus.embedding import get_embedder
from research_corpus.sentence_vectors import SentenceVectors
from research_corpus.sentences import sentence_key
from research_critic.repository import quote_vectors
from research_ledger import UnitOfWork
from research_platform.db import session_factory, without_transactions

pytestmark = pytest.mark.integration


async def test_stored_quote_vectors_are_found_and_unknown_quotes_left_out(
    sessions, engine, unique: str
) -> None:
    stored = f"Vision screening in cohort {unique} did not improve vision."
    unknown = f"A sentence of an outside source {unique}."
    vector = get_embedder().embed_direct([stored])  # type: ignore[attr-defined]  # the process embedder is the micro-batching one
    async with sessions() as session, session.begin():
        await SentenceVectors(session).keep([sentence_key(stored)], vector)
    async with session_factory(
        without_transactions(engine)
    )() as session:  # the critic's read session
        found = await quote_vectors(UnitOfWork(session, service="critic"), [stored, unknown])
    assert list(found) == [stored]
    assert found[stored] == pytest.approx(vector[0].tolist(), abs=1e-6)


async def test_a_failed_lookup_means_embedding_and_leaves_the_session_usable(
    engine, monkeypatch
) -> None:
    async def broken(self, sentences):
        await self.session.execute(text("SELECT * FROM no_such_table"))

    monkeypatch.setattr(SentenceVectors, "vectors_of", broken)
    reads = session_factory(without_transactions(engine))  # the critic reads as it does in service
    async with reads() as session:
        assert await quote_vectors(UnitOfWork(session, service="critic"), ["Any quote."]) == {}
        assert (
            await UnitOfWork(session, service="critic").verdicts.active_of_entity(
                "no such entity", besides=uuid.uuid4()
            )
            == []
        )
