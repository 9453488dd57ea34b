"""Integration: postings carry their impact, and lexical search reads each lexeme's best prefix.

A posting's `impact` is its length-normalised term frequency; within a lexeme BM25's term score
is a monotone function of it, so the `lexical_depth` postings of highest impact are the lexeme's
best-scoring chunks. Unfiltered searches read only that prefix; filtered ones read every posting.
Migration 0013 computes the impacts of a corpus written before it.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections import defaultdict

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from research_corpus.ingest import ingest_path
from research_corpus.search import SearchFilters, lexical_chunks
from research_platform.db import create_engine, session_factory
from research_platform.migrate import upgrade
from research_platform.settings import CorpusSettings
from tests.corpus.conftest import _create_database, _in_thread, write_jsonl

pytestmark = pytest.mark.integration

# One lexeme ("fibrosis") in every paper, at different frequencies and lengths.
PAPERS = [
    {
        "id": f"p{i}",
        "title": f"Study {i} of hepatic tissue",
        "abstract": " ".join(["Fibrosis was scored."] * (i % 4 + 1) + ["Other words follow."] * i),
        "year": 2000 + i,
    }
    for i in range(12)
]


def _term_score(tf: float, doc_len: int, avgdl: float, settings: CorpusSettings) -> float:
    norm = 1 - settings.bm25_b + settings.bm25_b * doc_len / avgdl
    return tf * (settings.bm25_k1 + 1) / (tf + settings.bm25_k1 * norm)


@pytest.fixture
async def corpus(empty_corpus, tmp_path):
    await ingest_path(
        empty_corpus, write_jsonl(tmp_path / "p.jsonl", PAPERS), fmt="jsonl", progress=False
    )
    return empty_corpus


async def test_each_lexemes_postings_in_impact_order_are_in_bm25_term_score_order(corpus) -> None:
    settings = CorpusSettings()
    async with corpus() as session:
        avgdl = await session.scalar(text("SELECT avg_doc_len FROM corpus_stats WHERE id = 1"))
        rows = (
            await session.execute(
                text(
                    "SELECT lexeme, impact, tf_text + tf_title AS tf, doc_len FROM corpus_postings"
                    " ORDER BY lexeme, impact DESC"
                )
            )
        ).all()
    by_lexeme: dict[str, list[float]] = defaultdict(list)
    for lexeme, impact, tf, doc_len in rows:
        assert impact > 0
        by_lexeme[lexeme].append(_term_score(tf, doc_len, avgdl, settings))
    assert len(by_lexeme["fibrosi"]) == len(PAPERS)
    for scores in by_lexeme.values():
        assert all(a >= b - 1e-9 for a, b in itertools.pairwise(scores))


async def test_a_depth_reads_each_lexemes_best_postings_and_filters_read_them_all(corpus):
    every = CorpusSettings(lexical_depth=0)
    async with corpus() as session:
        exhaustive = await lexical_chunks(session, "fibrosis", 50, SearchFilters(), every)
    assert len(exhaustive) == len(PAPERS)
    async with corpus() as session:
        deep = await lexical_chunks(
            session, "fibrosis", 50, SearchFilters(), CorpusSettings(lexical_depth=100)
        )
    assert deep == exhaustive  # a depth past the lexeme's postings changes nothing
    async with corpus() as session:
        top3 = await lexical_chunks(
            session, "fibrosis", 50, SearchFilters(), CorpusSettings(lexical_depth=3)
        )
    assert top3 == exhaustive[:3]  # one lexeme: its 3 best postings are the 3 best chunks

    late = SearchFilters(year_from=2009)  # the papers a prefix of 3 would all miss
    async with corpus() as session:
        filtered = await lexical_chunks(
            session, "fibrosis", 50, late, CorpusSettings(lexical_depth=1)
        )
    async with corpus() as session:
        filtered_all = await lexical_chunks(session, "fibrosis", 50, late, every)
    assert filtered == filtered_all and len(filtered) == 3


async def test_migration_0013_gives_an_existing_corpus_its_impacts(servers, tmp_path):
    name = f"corpus_0013_{uuid.uuid4().hex[:8]}"
    _in_thread(lambda: asyncio.run(_create_database(servers.database_url, name)))
    url = make_url(servers.database_url).set(database=name).render_as_string(hide_password=False)
    _in_thread(upgrade, url, "0012")
    engine = create_engine(url)
    sessions = session_factory(engine)
    try:
        async with sessions() as session, session.begin():
            await session.execute(
                text(
                    "INSERT INTO corpus_papers (id, external_id, title, abstract, authors, keywords, content_hash)"
                    " VALUES (1, 'a', 't', 'x', '[]', '[]', 'h')"
                )
            )
            await session.execute(
                text(
                    "INSERT INTO corpus_chunks"
                    " (id, paper_id, chunk_index, section, locator, text, embedding, tsv, token_count)"
                    " SELECT i, 1, i, 'abstract', 'abstract', 'x', array_fill(0.1, ARRAY[384])::vector,"
                    " to_tsvector('x'), n FROM (VALUES (1, 10), (2, 30)) AS v(i, n)"
                )
            )
            await session.execute(
                text(
                    "INSERT INTO corpus_postings (lexeme, chunk_id, tf_text, tf_title, doc_len)"
                    " VALUES ('fibrosi', 1, 2, 1, 10), ('fibrosi', 2, 2, 0, 30)"
                )
            )
            await session.execute(
                text("INSERT INTO corpus_stats (id, chunks, avg_doc_len) VALUES (1, 2, 20)")
            )
        await asyncio.to_thread(upgrade, url)
        settings = CorpusSettings()
        async with sessions() as session:
            impacts = dict(
                (await session.execute(text("SELECT chunk_id, impact FROM corpus_postings"))).all()
            )
            indexes = set(
                (
                    await session.execute(
                        text("SELECT indexname FROM pg_indexes WHERE tablename = 'corpus_postings'")
                    )
                ).scalars()
            )
        b, weight = settings.bm25_b, settings.title_weight
        assert impacts[1] == pytest.approx((2 + weight) / (1 - b + b * 10 / 20), rel=1e-6)
        assert impacts[2] == pytest.approx(2 / (1 - b + b * 30 / 20), rel=1e-6)
        assert "ix_corpus_postings_impact" in indexes and "corpus_postings_pkey" not in indexes
    finally:
        await engine.dispose()
