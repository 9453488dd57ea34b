"""Integration: BM25 statistics kept incrementally, the bulk (COPY + late index) load, and its failure path.

Every check compares the incremental statistics with a full recompute over the same rows
(`CorpusRepository.refresh_lexeme_stats`), so a delta that is off by one lexeme fails.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from sqlalchemy import text

from research_corpus.ingest import ingest_path
from research_corpus.records import PaperRecord, chunk_paper, read_jsonl
from research_corpus.repository import BULK_CONSTRAINTS, BULK_INDEXES, CorpusRepository
from research_platform.settings import CorpusSettings
from tests.corpus.conftest import SMALL_CORPUS, write_jsonl

pytestmark = pytest.mark.integration

BULK = set(BULK_INDEXES) | set(BULK_CONSTRAINTS)  # what a bulk load drops and restores


async def _statistics(sessions) -> tuple[dict[str, int], tuple[int, float]]:
    async with sessions() as session:
        lexemes = dict(
            (await session.execute(text("SELECT lexeme, doc_freq FROM corpus_lexemes"))).all()
        )
        stats = (
            await session.execute(text("SELECT chunks, avg_doc_len FROM corpus_stats WHERE id = 1"))
        ).one()
    return lexemes, (stats.chunks, stats.avg_doc_len)


async def _recomputed(sessions) -> tuple[dict[str, int], tuple[int, float]]:
    """The statistics a full recompute gives, read inside a transaction that is rolled back."""
    async with sessions() as session, session.begin():
        await CorpusRepository(session).refresh_lexeme_stats()
        lexemes = dict(
            (await session.execute(text("SELECT lexeme, doc_freq FROM corpus_lexemes"))).all()
        )
        stats = (
            await session.execute(text("SELECT chunks, avg_doc_len FROM corpus_stats WHERE id = 1"))
        ).one()
        await session.rollback()
    return lexemes, (stats.chunks, stats.avg_doc_len)


async def _indexes(sessions) -> set[str]:
    """The chunks' and postings' indexes, and the postings' constraints (a bulk load drops both)."""
    async with sessions() as session:
        rows = await session.execute(
            text(
                "SELECT indexname FROM pg_indexes"
                " WHERE tablename IN ('corpus_chunks', 'corpus_postings')"
                " UNION SELECT conname FROM pg_constraint"
                " WHERE conrelid = CAST('corpus_postings' AS regclass)"
            )
        )
        return {name for (name,) in rows}


def _assert_same(incremental, full) -> None:
    (lex_a, (chunks_a, avg_a)), (lex_b, (chunks_b, avg_b)) = incremental, full
    assert lex_a == lex_b
    assert chunks_a == chunks_b and avg_a == pytest.approx(avg_b, rel=1e-9)


async def test_incremental_statistics_equal_a_full_recompute_after_adds_and_revisions(
    empty_corpus, small_corpus, tmp_path
):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    _assert_same(await _statistics(empty_corpus), await _recomputed(empty_corpus))

    revised = [dict(r) for r in SMALL_CORPUS]
    revised[0]["title"] = (
        "Aspirin in zebrafish"  # 'myocardi' leaves the corpus, 'zebrafish' arrives
    )
    revised[0]["abstract"] = "Aspirin did nothing for zebrafish hearts."
    revised.append(
        {
            "id": "metformin",
            "title": "Metformin and longevity",
            "abstract": "Metformin use and survival.",
        }
    )
    report = await ingest_path(
        empty_corpus, write_jsonl(tmp_path / "v2.jsonl", revised), fmt="jsonl", progress=False
    )
    assert (report.added, report.updated) == (1, 1)
    incremental = await _statistics(empty_corpus)
    _assert_same(incremental, await _recomputed(empty_corpus))
    assert (
        incremental[0]["zebrafish"] == 1 and "myocardi" not in incremental[0]
    )  # gone with its only chunk


async def test_bulk_load_builds_the_indexes_at_the_end_and_reingest_changes_nothing(
    empty_corpus, small_corpus
):
    first = await ingest_path(
        empty_corpus, small_corpus, fmt="jsonl", progress=False, bulk_min_papers=1
    )
    assert (first.added, first.errors) == (6, [])
    assert await _indexes(empty_corpus) >= BULK
    before = await _statistics(empty_corpus)
    _assert_same(before, await _recomputed(empty_corpus))
    assert before[0]["aspirin"] >= 1  # the bulk load's lexemes were counted when it ended

    again = await ingest_path(
        empty_corpus, small_corpus, fmt="jsonl", progress=False, bulk_min_papers=1
    )
    assert (again.added, again.updated, again.unchanged, again.chunks) == (0, 0, 6, 0)
    assert await _statistics(empty_corpus) == before


class _BrokenEmbedder:
    """Fails on the second batch, after the first one was written."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("embedding worker died")
        return np.full((len(texts), 384), 1 / np.sqrt(384), dtype=np.float32)


async def test_a_failed_bulk_load_still_restores_the_indexes(empty_corpus, small_corpus):
    with pytest.raises(RuntimeError, match="embedding worker died"):
        await ingest_path(
            empty_corpus,
            small_corpus,
            fmt="jsonl",
            progress=False,
            embedder=_BrokenEmbedder(),
            batch_papers=2,
            bulk_min_papers=1,
        )
    assert await _indexes(empty_corpus) >= BULK
    _assert_same(
        await _statistics(empty_corpus), await _recomputed(empty_corpus)
    )  # what was written is counted


async def test_ingesting_after_the_tables_were_emptied_starts_from_fresh_statistics(
    empty_corpus, small_corpus
):
    async with (
        empty_corpus() as session,
        session.begin(),
    ):  # stale totals a TRUNCATE of the chunks left behind
        await session.execute(
            text("INSERT INTO corpus_stats (id, chunks, avg_doc_len) VALUES (1, 999, 42)")
        )
        await session.execute(
            text("INSERT INTO corpus_lexemes (lexeme, doc_freq) VALUES ('aspirin', 77)")
        )
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    stats = await _statistics(empty_corpus)
    _assert_same(stats, await _recomputed(empty_corpus))
    assert stats[0]["aspirin"] == 2


async def test_the_next_ingest_restores_indexes_a_killed_bulk_load_left_dropped(
    empty_corpus, small_corpus, tmp_path
):
    await ingest_path(
        empty_corpus,
        write_jsonl(tmp_path / "one.jsonl", SMALL_CORPUS[:1]),
        fmt="jsonl",
        progress=False,
    )
    async with (
        empty_corpus() as session,
        session.begin(),
    ):  # what a SIGKILL between drop and build leaves
        await CorpusRepository(session).drop_bulk_indexes()
    assert not BULK & await _indexes(empty_corpus)
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    assert await _indexes(empty_corpus) >= BULK


async def test_a_bulk_index_build_takes_its_memory_from_settings_and_times_each_index(
    empty_corpus, small_corpus
):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    async with empty_corpus() as session, session.begin():
        await CorpusRepository(session).drop_bulk_indexes()
    steps: dict[str, float] = {}
    settings = CorpusSettings(index_build_memory_mb=96)
    async with empty_corpus() as session, session.begin():
        await CorpusRepository(session, settings, timings=steps).build_bulk_indexes()
        memory = await session.scalar(text("SHOW maintenance_work_mem"))
    assert memory == "96MB"
    assert set(steps) == {f"index {name}" for name in BULK_INDEXES | BULK_CONSTRAINTS} | {
        "lexeme counts"
    }
    assert await _indexes(empty_corpus) >= BULK


async def _write(sessions, papers: list[PaperRecord], *, bulk: bool) -> None:
    async with sessions() as session, session.begin():
        repo = CorpusRepository(session, bulk=bulk)
        ids = await repo.add_papers(papers)
        rows = [(ids[p.external_id], p, chunk) for p in papers for chunk in chunk_paper(p)]
        await repo.add_chunks(rows, np.full((len(rows), 384), 1 / np.sqrt(384), np.float32))


async def test_two_bulk_writers_at_once_leave_the_lexemes_to_the_index_build_which_counts_them_all(
    empty_corpus, small_corpus
):
    papers = [p for p in read_jsonl(small_corpus, "jsonl") if isinstance(p, PaperRecord)]
    await _write(empty_corpus, papers, bulk=False)  # one incremental writer: the reference
    reference, postings = await _statistics(empty_corpus), await _postings(empty_corpus)
    async with empty_corpus() as session, session.begin():
        await session.execute(text("TRUNCATE corpus_papers, corpus_lexemes, corpus_stats CASCADE"))
        await CorpusRepository(session).drop_bulk_indexes()

    half = len(papers) // 2
    await asyncio.gather(  # two transactions open together, as bench:scale's writers run
        _write(empty_corpus, papers[:half], bulk=True),
        _write(empty_corpus, papers[half:], bulk=True),
    )
    lexemes, (chunks, _) = await _statistics(empty_corpus)
    assert lexemes == {} and chunks == reference[1][0]  # the totals are kept, the lexemes wait
    async with empty_corpus() as session, session.begin():
        await CorpusRepository(session).build_bulk_indexes()
    _assert_same(await _statistics(empty_corpus), reference)
    assert await _postings(empty_corpus) == postings
    assert await _indexes(empty_corpus) >= BULK


async def test_a_bulk_load_that_ends_after_another_built_the_indexes_still_counts_its_lexemes(
    empty_corpus, small_corpus
):
    from research_corpus.ingest import _finish_bulk

    papers = [p for p in read_jsonl(small_corpus, "jsonl") if isinstance(p, PaperRecord)]
    async with empty_corpus() as session, session.begin():
        await CorpusRepository(session).drop_bulk_indexes()
    await _write(empty_corpus, papers[:3], bulk=True)
    async with empty_corpus() as session, session.begin():  # the other load ends first
        assert await CorpusRepository(session).build_bulk_indexes()
    await _write(empty_corpus, papers[3:], bulk=True)  # this one goes on, then ends
    await _finish_bulk(empty_corpus)
    stats = await _statistics(empty_corpus)
    _assert_same(stats, await _recomputed(empty_corpus))
    assert stats[1][0] > 0 and all(stats[0].values())


async def _postings(sessions) -> list[tuple[str, str, int, int]]:
    """Every posting by paper and lexeme, with its term counts (not its impact: that depends on
    the mean length when its batch was written)."""
    async with sessions() as session:
        rows = await session.execute(
            text(
                "SELECT p.external_id, ps.lexeme, ps.tf_text, ps.tf_title FROM corpus_postings ps"
                " JOIN corpus_chunks c ON c.id = ps.chunk_id JOIN corpus_papers p ON p.id = c.paper_id"
                " ORDER BY 1, 2, 3, 4"
            )
        )
        return [tuple(row) for row in rows]
