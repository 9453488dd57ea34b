"""Integration: `corpus ingest` as jobs on the JetStream work queue, written by several workers.

Real NATS JetStream and Postgres + pgvector. The in-process tests run two workers with a
text-keyed stand-in model (a vector says which text it came from); the kill test runs real worker
processes (`research-engine corpus worker`, the shipped model) and kills one with SIGKILL
mid-ingest: every paper must land exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import text

from research_contracts import subjects
from research_corpus.ingest import ingest_path
from research_corpus.ingest_bus import IngestWorker, ensure_ingest_stream, ingest_over_bus
from research_corpus.records import chunk_paper, read_jsonl
from research_platform.settings import CorpusSettings, Settings
from tests.corpus.conftest import write_jsonl
from tests.corpus.test_ingest_pipeline import PAPERS, TextKeyedModel, _chunks, _sentences

pytestmark = pytest.mark.integration

WORKER_SETTINGS = CorpusSettings(
    chunk_words=12, ingest_worker_batch=3, ingest_ack_wait_s=2.0, sentence_vectors="ingest"
)


class KeyedModel(TextKeyedModel):
    model_id = "stand-in/bus"


async def _fresh_queue(nc) -> None:
    """An empty ingest queue and no consumer (so this test's ack wait applies)."""
    await ensure_ingest_stream(nc, Settings())
    js = nc.jetstream()
    await js.purge_stream(subjects.INGEST_STREAM)
    with contextlib.suppress(Exception):
        await js.delete_consumer(subjects.INGEST_STREAM, subjects.INGEST_WORKERS_DURABLE)


async def _paper_counts(sessions) -> dict[str, int]:
    async with sessions() as session:
        rows = await session.execute(
            text("SELECT external_id, count(*) FROM corpus_papers GROUP BY external_id")
        )
        return dict(rows.all())


async def test_two_workers_store_what_the_in_process_ingest_stores_once_per_paper(
    empty_corpus, nc, tmp_path
):
    await _fresh_queue(nc)
    path = write_jsonl(
        tmp_path / "papers.jsonl",
        [*PAPERS, "{not json", {**PAPERS[0], "title": "the same id again"}],
    )
    workers = [
        IngestWorker(empty_corpus, nc, Settings(corpus=WORKER_SETTINGS), embedder=KeyedModel())
        for _ in range(2)
    ]
    running = [asyncio.create_task(w.run(fetch_wait_s=0.2)) for w in workers]
    try:
        report = await asyncio.wait_for(
            ingest_over_bus(
                empty_corpus, nc, path, fmt="jsonl", progress=False, poll_s=0.1, settings=Settings()
            ),
            120,
        )
        assert report.queued == 9 and report.left == 0
        assert (report.added, report.updated, report.unchanged) == (9, 0, 0)
        assert [e.line for e in report.errors] == [10, 11]  # malformed, repeated id: never queued
        assert await _paper_counts(empty_corpus) == {p["id"]: 1 for p in PAPERS}
        assert sum(w.papers for w in workers) == 9
        chunks, sentences = await _chunks(empty_corpus), await _sentences(empty_corpus)
        # a sentence two papers share may be embedded by both workers (stored once)
        assert report.chunks == len(chunks) and report.sentences >= len(sentences)

        # The same file again at once: every paper is already queued or written (duplicate window).
        again = await ingest_over_bus(
            empty_corpus, nc, path, fmt="jsonl", progress=False, settings=Settings()
        )
        assert (again.queued, again.already_queued) == (0, 9)

        # A changed paper is queued and re-indexed; the others stay as they are.
        changed = write_jsonl(
            tmp_path / "changed.jsonl",
            [{**PAPERS[3], "abstract": "A new abstract. Nothing else changed."}, *PAPERS[4:6]],
        )
        third = await ingest_over_bus(
            empty_corpus, nc, changed, fmt="jsonl", progress=False, poll_s=0.1, settings=Settings()
        )
        assert (third.queued, third.already_queued, third.updated) == (1, 2, 1)
    finally:
        for w in workers:
            w.stop()
        await asyncio.gather(*running)

    # The rows are those of the in-process ingest of the same papers.
    bus_chunks, bus_sentences = await _chunks(empty_corpus), await _sentences(empty_corpus)
    async with empty_corpus() as session, session.begin():
        await session.execute(
            text(
                "TRUNCATE corpus_chunks, corpus_papers, corpus_lexemes, corpus_stats, "
                "corpus_sentences RESTART IDENTITY CASCADE"
            )
        )
    for file in (path, changed):
        await ingest_path(
            empty_corpus,
            file,
            fmt="jsonl",
            progress=False,
            embedder=KeyedModel(),
            chunk_words=12,
            sentence_vectors=True,
        )
    assert await _chunks(empty_corpus) == bus_chunks
    assert set(await _sentences(empty_corpus)) <= set(bus_sentences)  # + the replaced abstract's


def _worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "research_engine.cli", "corpus", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def test_a_worker_killed_mid_ingest_loses_no_paper_and_duplicates_none(
    empty_corpus, corpus_database_url, servers, nc, shared_dir, tmp_path
):
    await _fresh_queue(nc)
    source = shared_dir / "data/scifact/corpus.jsonl"
    path = tmp_path / "corpus.jsonl"
    with source.open() as lines:
        path.write_text("".join(next(lines) for _ in range(48)))
    env = {
        **os.environ,
        "NATS_URL": servers.nats_url,
        "DATABASE_URL": corpus_database_url,
        "CORPUS__INGEST_WORKER_BATCH": "4",
        "CORPUS__INGEST_ACK_WAIT_S": "3",
        "OMP_NUM_THREADS": "1",
    }
    first = _worker(env)
    survivor = None
    follow = asyncio.create_task(
        ingest_over_bus(
            empty_corpus, nc, path, fmt="scifact", progress=False, stall_s=300, settings=Settings()
        )
    )
    try:
        deadline = time.monotonic() + 400
        while sum((await _paper_counts(empty_corpus)).values()) < 8:  # two batches written
            assert time.monotonic() < deadline, "the first worker wrote nothing"
            assert first.poll() is None, first.stderr.read().decode()[-2000:]
            await asyncio.sleep(0.2)
        first.send_signal(signal.SIGKILL)  # mid-ingest: a batch in the model, one maybe in a write
        first.wait(10)
        written = sum((await _paper_counts(empty_corpus)).values())
        assert written < 48, "the worker finished before it was killed: nothing was tested"
        survivor = _worker(env)
        report = await asyncio.wait_for(follow, 600)
    finally:
        for process in (first, survivor):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(60)
        if not follow.done():
            follow.cancel()
    assert survivor.returncode == 0  # stopped by SIGTERM: it finished its batch and exited
    assert report.left == 0 and report.queued == 48
    papers = list(read_jsonl(path, "scifact"))
    counts = await _paper_counts(empty_corpus)
    assert counts == {p.external_id: 1 for p in papers}  # every paper exactly once
    async with empty_corpus() as session:
        chunks = dict(
            (
                await session.execute(
                    text(
                        "SELECT p.external_id, count(*) FROM corpus_chunks c "
                        "JOIN corpus_papers p ON p.id = c.paper_id GROUP BY p.external_id"
                    )
                )
            ).all()
        )
        left = (await nc.jetstream().stream_info(subjects.INGEST_STREAM)).state.messages
    chunk_words = CorpusSettings().chunk_words
    assert chunks == {p.external_id: len(chunk_paper(p, chunk_words)) for p in papers}
    assert left == 0  # every job acknowledged and gone from the work queue
