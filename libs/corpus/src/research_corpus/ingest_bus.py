"""Ingest on the bus: one job per paper on a JetStream work queue, written by any number of workers.

`research-engine corpus ingest PATH --workers N` (or `--bus`, with workers started elsewhere)
reads and checks the file as the in-process ingest does (malformed lines and repeated ids are
reported by line and never queued), then publishes every paper as one job on
`research.ingest.paper.<run>` of the work-queue stream `RESEARCH_INGEST`. Every worker
(`research-engine corpus worker`, one process per machine or per core, all sharing NATS and
PostgreSQL) pulls from the one durable consumer `ingest-workers`, so each job goes to one
worker at a time:

- **Batches, pipelined.** A worker takes up to `CORPUS__INGEST_WORKER_BATCH` jobs at once and
  runs them through the same steps as the in-process ingest (`ingest._plan_batch`, one model
  call, `ingest._write_batch` in one transaction), embedding batch k+1 while it writes batch k.
- **Idempotent per paper.** A job is acknowledged only after its paper's transaction has
  committed. A paper stored already with the same content is skipped (content hash), so a job
  delivered twice — a worker killed between commit and ack, a file queued twice — stores the
  paper once; two workers inserting the same new paper at once cannot both commit
  (`corpus_papers.external_id` is unique): the loser's batch is rolled back and delivered again,
  and then finds the paper stored. The same paper queued twice within the stream's duplicate
  window (id and content hash as `Nats-Msg-Id`) is queued once.
- **Resumable after kill -9.** A killed worker's unacknowledged jobs are delivered to another
  worker (or to it, restarted) once `CORPUS__INGEST_ACK_WAIT_S` has passed; a live worker
  sends `in_progress` for the jobs it holds, so a slow batch is never handed out twice.
- **Progress.** The command counts the run's jobs left in the stream (acknowledged jobs are
  deleted) and shows the same bar as the in-process ingest; workers report each written batch
  (added, updated, unchanged, chunks, sentences) on core NATS `research.ingest.done.<run>`.

A large load into an empty corpus drops the chunk indexes before queueing and builds them once
the queue of the run is empty, as the in-process ingest does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from tqdm import tqdm

from research_contracts import subjects
from research_corpus import stamp
from research_corpus.embedding import Embedder, get_embedder
from research_corpus.embedding.batching import MicroBatchingEmbedder
from research_corpus.ingest import (
    BULK_MIN_PAPERS,
    IngestReport,
    Written,
    _admit,
    _adopt_stored_ids,
    _batches,
    _count_records,
    _finish_bulk,
    _Pipeline,
    _Plan,
    _plan_batch,
    _prepare_bulk,
    _records,
    _write_batch,
    checked_source,
    progress_bar,
)
from research_corpus.library import LIBRARY_FORMATS
from research_corpus.records import PaperRecord, Section
from research_platform.logging import get_logger
from research_platform.settings import CorpusSettings, Settings

PUBLISH_WINDOW = 256  # publishes awaited together (each waits for the stream's ack)
log = get_logger(__name__)


class IngestJob(BaseModel):
    """One paper to ingest, as queued on `research.ingest.paper.<run>`."""

    run: str
    format: str
    paper: dict[str, Any] = Field(
        description="The `PaperRecord`, as `dataclasses.asdict` gives it."
    )

    def record(self) -> PaperRecord:
        fields = dict(self.paper)
        fields["sections"] = [Section(**section) for section in fields.get("sections", [])]
        return PaperRecord(**fields)


class BatchDone(Written):
    """What a worker wrote for one run in one batch (published on `research.ingest.done.<run>`)."""

    run: str
    worker: str
    papers: int = 0


def job_id(paper: PaperRecord) -> str:
    """The job's `Nats-Msg-Id`: the same paper with the same content is queued once per window."""
    return f"ingest:{paper.external_id}:{paper.content_hash()}"


def consumer_config(settings: CorpusSettings) -> ConsumerConfig:
    return ConsumerConfig(
        durable_name=subjects.INGEST_WORKERS_DURABLE,
        ack_policy=AckPolicy.EXPLICIT,
        deliver_policy=DeliverPolicy.ALL,
        ack_wait=settings.ingest_ack_wait_s,
        max_deliver=settings.ingest_max_deliver,
        max_ack_pending=-1,
        filter_subject=subjects.INGEST_SUBJECTS[0],
    )


async def ensure_ingest_stream(nc: nats.NATS, settings: Settings) -> None:
    """The platform's streams (the ingest queue among them), created or updated as `settings`
    (replicas, dead-letter age) declare them."""
    from research_platform.broker import ensure_streams
    from research_platform.nats_seeds import stream_replicas

    await ensure_streams(
        nc.jetstream(),
        stream_replicas(nc, settings.nats_stream_replicas),
        dead_letter_max_age_days=settings.dead_letter_max_age_days,
    )


# --- the worker --------------------------------------------------------------------------------


@dataclasses.dataclass
class _Held:
    """A batch between fetch and acknowledgement: its plan, its messages and its jobs' runs."""

    plan: _Plan | None
    messages: list[Any]
    runs: dict[str, str]  # external id -> run
    report: IngestReport


class IngestWorker:
    """Pulls ingest jobs and writes their papers until `stop()` (see the module doc)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        nc: nats.NATS,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        name: str | None = None,
    ) -> None:
        """`settings`: the process's; the worker reads its `corpus` group and the streams' settings."""
        self.sessions = sessions
        self.nc = nc
        self.streams = settings
        self.settings: CorpusSettings = settings.corpus
        self.embedder = embedder or get_embedder()
        self.name = name or f"worker-{uuid.uuid4().hex[:8]}"
        self.model = getattr(self.embedder, "model_id", None)
        self.embedded: set[bytes] = set()
        self.held: list[_Held] = []
        self.papers = 0  # papers whose jobs this worker acknowledged
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    def _embed(self) -> Callable[[list[str]], Any]:
        embedder = self.embedder
        return (
            embedder.embed_direct if isinstance(embedder, MicroBatchingEmbedder) else embedder.embed
        )

    async def run(self, fetch_wait_s: float = 1.0) -> None:
        await ensure_ingest_stream(self.nc, self.streams)
        js = self.nc.jetstream()
        subscription = await js.pull_subscribe(
            subjects.INGEST_SUBJECTS[0],
            durable=subjects.INGEST_WORKERS_DURABLE,
            stream=subjects.INGEST_STREAM,
            config=consumer_config(self.settings),
        )
        if self.model is not None:  # a corpus embedded by another model: refuse before any job
            async with self.sessions() as session, session.begin():
                await stamp.claim_for_ingest(session, self.model)
        pipeline = _Pipeline(self._embed())
        waiting: deque[_Held] = deque()  # the batch in the model (pipeline.current)
        heartbeat = asyncio.create_task(self._heartbeat())
        log.info("ingest.worker_started", worker=self.name, model=self.model)
        try:
            while not self._stop.is_set():
                try:
                    messages = await subscription.fetch(
                        self.settings.ingest_worker_batch, timeout=fetch_wait_s
                    )
                except (nats.errors.TimeoutError, TimeoutError):  # nothing queued right now
                    messages = []
                if not messages:  # the queue is empty: finish the batch in the model
                    if done := await pipeline.drain():
                        await self._finish(waiting.popleft(), done[1])
                    continue
                held = await self._plan(messages)
                if held is None:
                    continue
                if held.plan is None:  # nothing to embed: every paper unchanged
                    await self._settle(held)
                    continue
                waiting.append(held)
                if done := await pipeline.push(held.plan):
                    await self._finish(waiting.popleft(), done[1])
            if done := await pipeline.drain():
                await self._finish(waiting.popleft(), done[1])
        finally:
            await pipeline.close()
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            for held in [*waiting, *self.held]:  # stopped mid-batch: let another worker have it
                await self._release(held)
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
            log.info("ingest.worker_stopped", worker=self.name, papers=self.papers)

    async def _heartbeat(self) -> None:
        """Tell the server every held job is being worked on, well within its ack wait."""
        interval = max(self.settings.ingest_ack_wait_s / 3, 0.2)
        while True:
            await asyncio.sleep(interval)
            for held in list(self.held):
                for message in held.messages:
                    with contextlib.suppress(Exception):
                        await message.in_progress()

    async def _plan(self, messages: list[Any]) -> _Held | None:
        papers: list[PaperRecord] = []
        runs: dict[str, str] = {}
        keep: list[Any] = []
        fmt = "scifact"
        for message in messages:
            try:
                job = IngestJob.model_validate_json(message.data)
                paper = job.record()
            except Exception as exc:  # noqa: BLE001 - a job that cannot be read is dropped, loudly
                log.error("ingest.job_unreadable", worker=self.name, reason=str(exc)[:300])
                await message.term()
                continue
            if paper.external_id in runs:  # the same paper twice in one batch: the next batch
                await message.nak(delay=1)
                continue
            runs[paper.external_id] = job.run
            fmt = job.format
            papers.append(paper)
            keep.append(message)
        if not papers:
            return None
        report = IngestReport(path="", format=fmt)
        held = _Held(None, keep, runs, report)
        self.held.append(held)
        try:
            if fmt in LIBRARY_FORMATS:
                await _adopt_stored_ids(self.sessions, papers)
                held.runs = {p.external_id: runs[i] for p, i in zip(papers, runs, strict=True)}
            held.plan = await _plan_batch(
                self.sessions,
                papers,
                report,
                self.settings.chunk_words,
                self.embedded,
                self.settings.sentence_vectors == "ingest",
            )
        except Exception as exc:  # noqa: BLE001 - the database is away: try the jobs again later
            log.warning("ingest.batch_failed", worker=self.name, step="plan", reason=str(exc)[:300])
            await self._release(held)
            return None
        if held.plan is not None:
            held.plan.records = len(papers)
        return held

    async def _finish(self, held: _Held, vectors: Any) -> None:
        assert held.plan is not None
        try:
            await _write_batch(
                self.sessions, held.plan, vectors, held.report, self.model, self.settings
            )
        except Exception as exc:  # noqa: BLE001 - a conflict or an outage: the jobs come back
            log.warning(
                "ingest.batch_failed", worker=self.name, step="write", reason=str(exc)[:300]
            )
            self.embedded.difference_update(held.plan.sentence_keys)
            await self._release(held)
            return
        await self._settle(held)

    async def _settle(self, held: _Held) -> None:
        """Acknowledge a written batch and report it, per run."""
        for message in held.messages:
            with contextlib.suppress(Exception):
                await message.ack()
        self._drop(held)
        self.papers += len(held.messages)
        plan = held.plan
        new = {p.external_id for p in plan.new} if plan else set()
        changed = {p.external_id for _, p in plan.changed} if plan else set()
        chunks: dict[str, int] = {}
        for paper, _ in plan.chunks if plan else []:
            chunks[paper.external_id] = chunks.get(paper.external_id, 0) + 1
        done: dict[str, BatchDone] = {}
        for external_id, run in held.runs.items():
            entry = done.setdefault(run, BatchDone(run=run, worker=self.name))
            entry.papers += 1
            entry.added += external_id in new
            entry.updated += external_id in changed
            entry.unchanged += external_id not in new and external_id not in changed
            entry.chunks += chunks.get(external_id, 0)
        if done:
            next(iter(done.values())).sentences = held.report.sentences
        for run, entry in done.items():
            with contextlib.suppress(Exception):
                await self.nc.publish(
                    subjects.ingest_done_subject(run), entry.model_dump_json().encode()
                )

    async def _release(self, held: _Held) -> None:
        for message in held.messages:
            with contextlib.suppress(Exception):
                await message.nak(delay=2)
        self._drop(held)

    def _drop(self, held: _Held) -> None:
        if held in self.held:
            self.held.remove(held)


# --- the command's side: queue a file, follow its run --------------------------------------------


class BusIngestReport(IngestReport):
    """An `IngestReport` of a run on the bus, with what happened to its jobs."""

    run: str = ""
    queued: int = Field(default=0, description="Jobs queued by this run.")
    already_queued: int = Field(
        default=0,
        description="Papers not queued because the same paper (id and content) was queued within the duplicate window.",
    )
    left: int = Field(default=0, description="Jobs of the run still queued when the command ended.")


async def _publish(js: Any, subject: str, papers: list[PaperRecord], run: str, fmt: str) -> int:
    """Queue `papers`; the number the stream took as duplicates (queued already)."""

    async def one(paper: PaperRecord) -> bool:
        job = IngestJob(run=run, format=fmt, paper=dataclasses.asdict(paper))
        ack = await js.publish(
            subject, job.model_dump_json().encode(), headers={"Nats-Msg-Id": job_id(paper)}
        )
        return bool(ack.duplicate)

    duplicates = 0
    for start in range(0, len(papers), PUBLISH_WINDOW):
        duplicates += sum(await asyncio.gather(*map(one, papers[start : start + PUBLISH_WINDOW])))
    return duplicates


async def _left(js: Any, subject: str) -> int:
    info = await js.stream_info(subjects.INGEST_STREAM, subjects_filter=subject)
    return int((info.state.subjects or {}).get(subject, 0))


async def _wait_for_workers(
    js: Any,
    subject: str,
    report: BusIngestReport,
    bar: tqdm[Any],
    *,
    poll_s: float,
    stall_s: float,
) -> None:
    """Follow the run's queue on `bar` until it is empty, or until it has not moved for `stall_s`
    seconds (then `report.left` says how many jobs remain)."""
    counted = bar.n
    last, moved = None, time.monotonic()
    while True:
        left = await _left(js, subject)
        bar.set_postfix_str(f"{report.chunks} chunks, {report.sentences} sentences", refresh=False)
        bar.update(counted + report.queued - left - bar.n)
        if left == 0:
            break
        if left != last:
            last, moved = left, time.monotonic()
        elif time.monotonic() - moved > stall_s:
            report.left = left
            log.warning("ingest.stalled", run=report.run, left=left, seconds=stall_s)
            break
        await asyncio.sleep(poll_s)


async def ingest_over_bus(
    sessions: async_sessionmaker[AsyncSession],
    nc: nats.NATS,
    path: str | Path,
    fmt: str = "scifact",
    progress: bool = True,
    *,
    settings: Settings,
    batch_papers: int = 1024,
    bulk_min_papers: int = BULK_MIN_PAPERS,
    poll_s: float = 0.5,
    stall_s: float | None = None,
) -> BusIngestReport:
    """Queue the papers of `path` as jobs, wait until workers have written them all, report.

    Returns when the run's queue is empty, or when it has not moved for `stall_s` seconds
    (default: 3 × ack wait × max deliveries; then `report.left` jobs remain queued for workers
    started later). Malformed records and repeated ids are in `report.errors`, as in-process.
    `settings` are the process's (the corpus group's ingest knobs, the streams')."""
    path, fmt = checked_source(path, fmt)
    corpus = settings.corpus
    stall_s = stall_s or 3 * corpus.ingest_ack_wait_s * corpus.ingest_max_deliver
    await ensure_ingest_stream(nc, settings)
    js = nc.jetstream()
    run = uuid.uuid4().hex[:12]
    subject = subjects.ingest_job_subject(run)
    report = BusIngestReport(path=str(path), format=fmt, run=run)
    started = time.perf_counter()
    total = _count_records(path, fmt)
    bulk = await _prepare_bulk(sessions, total, bulk_min_papers)

    async def received(message: Any) -> None:
        with contextlib.suppress(Exception):
            report.add(BatchDone.model_validate_json(message.data))

    done_sub = await nc.subscribe(subjects.ingest_done_subject(run), cb=received)
    bar = progress_bar(total, enabled=progress)
    seen: dict[str, int] = {}
    try:
        for batch in _batches(_records(path, fmt), batch_papers):
            papers = _admit(batch, seen, report)
            duplicates = await _publish(js, subject, papers, run, fmt)
            report.queued += len(papers) - duplicates
            report.already_queued += duplicates
            bar.update(len(batch) - len(papers) + duplicates)  # not queued: done for this run
        log.info("ingest.queued", run=run, jobs=report.queued, already=report.already_queued)
        await _wait_for_workers(js, subject, report, bar, poll_s=poll_s, stall_s=stall_s)
        await nc.flush()
        await asyncio.sleep(poll_s)  # the last batches' reports are on their way
    finally:
        bar.close()
        with contextlib.suppress(Exception):
            await done_sub.unsubscribe()
        if bulk and report.left == 0:
            await _finish_bulk(sessions)
    report.seconds = round(time.perf_counter() - started, 2)
    log.info(
        "corpus.ingested_over_bus",
        run=run,
        path=str(path),
        queued=report.queued,
        **report.counts(),
        errors=len(report.errors),
        left=report.left,
        seconds=report.seconds,
    )
    return report
