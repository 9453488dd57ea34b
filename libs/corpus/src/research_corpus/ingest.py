"""Load papers into the local corpus: idempotent, incremental, batched, with line-numbered errors.

`ingest_path(sessions, path, fmt)` reads a SciFact or generic JSONL file, a folder of PDFs or a
reference manager's export (BibTeX, RIS, CSL-JSON: `research_corpus.library`), skips papers whose content is unchanged, re-indexes changed ones, adds new ones, and keeps going
past malformed lines, which it reports with their line numbers. Each batch is one transaction
(papers, COPYed chunks, postings, statistics deltas). Ingest is a pipeline around the model: one
worker thread embeds batch k+1 while the event loop writes batch k to Postgres and reads and
plans batch k+2, so the model never waits for the database and on a large load the wall time
approaches the embedding time alone (`_Pipeline`). An empty corpus loaded with at least
`bulk_min_papers` papers drops the chunks' HNSW and the postings' impact index first and builds
them once at the end (faster than maintaining them row by row); they are rebuilt even when the
load fails.

Sentence vectors (`corpus_sentences`, read by the offline engine) are lazy by default: the ingest
embeds chunks only, and the first request that reads a paper embeds its sentences and stores them
(`research_researcher.pipeline.Researcher.with_known_vectors`). Eight in nine texts of an abstract
corpus are sentences, so this is most of the model's work at ingest. With `sentence_vectors=True`
(setting `corpus.sentence_vectors = "ingest"`) every sentence of a paper's text is embedded with the
batch's chunks in the same model call instead. Sentences are stored once by content: such an
ingest embeds only the sentences that have no vector yet, including those of unchanged papers
ingested lazily, and a sentence repeated across batches once (the batch that meets it first may
not be written yet when the next one is planned, so the ingest remembers what it has sent to the
model).

A library record is matched to the paper already stored with its DOI (from any file) or under
its record key before anything else, so re-exporting a library updates papers, never duplicates
them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from tqdm import tqdm

from research_corpus import stamp
from research_corpus.embedding import Embedder, get_embedder
from research_corpus.embedding.batching import MicroBatchingEmbedder
from research_corpus.errors import CorpusError, MalformedRecordError
from research_corpus.formats import detect_format
from research_corpus.library import LIBRARY_FORMATS, read_library
from research_corpus.records import (
    CHUNK_WORDS,
    Chunk,
    PaperRecord,
    chunk_paper,
    read_jsonl,
)
from research_corpus.sentences import sentence_key, split_sentences
from research_platform.logging import get_logger
from research_platform.settings import CorpusSettings

BATCH_PAPERS = 256
BULK_MIN_PAPERS = (
    1000  # an empty corpus loaded with at least this many papers builds its indexes at the end
)
FORMATS = ("scifact", "jsonl", "pdf-dir", *LIBRARY_FORMATS)
log = get_logger(__name__)


class IngestError(BaseModel):
    """A record that was not ingested, and why."""

    line: int = Field(
        description="1-based line of the input file (for a PDF folder: the file's position)."
    )
    reason: str
    source: str | None = Field(default=None, description="The PDF file, for pdf-dir ingests.")


class Written(BaseModel):
    """What an ingest wrote, or one batch of it: papers added / updated / unchanged, chunks and
    sentences embedded."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks: int = 0
    sentences: int = Field(
        default=0, description="Sentences embedded because the corpus had no vector of them yet."
    )

    def counts(self) -> dict[str, int]:
        """These counts by name (a log line's fields)."""
        return {name: getattr(self, name) for name in Written.model_fields}

    def add(self, other: Written) -> None:
        """Count what `other` wrote in these counts too."""
        for name, count in other.counts().items():
            setattr(self, name, getattr(self, name) + count)


class IngestReport(Written):
    """What one ingest did: counts of papers added / updated / unchanged and every bad record."""

    path: str
    format: str
    errors: list[IngestError] = Field(default_factory=list)
    metadata_only: int = Field(
        default=0,
        description="Papers read without abstract or PDF text: stored with their metadata, searchable by title.",
    )
    attachments: int = Field(
        default=0, description="Attached PDFs whose text was ingested with their library record."
    )
    notes: list[IngestError] = Field(
        default_factory=list, description="Records kept with a remark (an attached PDF not found)."
    )
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors


def _batches(
    items: Iterable[PaperRecord | MalformedRecordError], size: int
) -> Iterator[list[PaperRecord | MalformedRecordError]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def checked_source(path: str | Path, fmt: str) -> tuple[Path, str]:
    """`path` and its format (`auto`: detected from the file), or CorpusError when the path is
    missing, the format unknown, or a folder given for a file format (or a file for `pdf-dir`)."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path} does not exist")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise CorpusError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    if (fmt == "pdf-dir") != path.is_dir():
        raise CorpusError(
            f"format {fmt!r} does not fit {'folder' if path.is_dir() else 'file'} {path}"
        )
    return path, fmt


def _records(path: Path, fmt: str) -> Iterator[PaperRecord | MalformedRecordError]:
    if fmt == "pdf-dir":
        from research_corpus.pdf import read_pdf_dir

        return read_pdf_dir(path)
    if fmt in LIBRARY_FORMATS:
        return read_library(path, fmt)
    return read_jsonl(path, fmt)


def _count_records(path: Path, fmt: str) -> int | None:
    if fmt == "pdf-dir":
        return sum(1 for _ in path.glob("**/*.pdf"))
    if fmt in LIBRARY_FORMATS:
        return None  # records span many lines; the bar counts without a total
    with path.open("rb") as handle:
        return sum(1 for raw in handle if raw.strip())


async def _adopt_stored_ids(
    sessions: async_sessionmaker[AsyncSession], papers: list[PaperRecord]
) -> None:
    """Give each library record the id its paper is already stored under: by DOI, else by an alias."""
    from research_corpus.repository import CorpusRepository

    async with sessions() as session:
        repo = CorpusRepository(session)
        by_doi = await repo.ids_by_doi(sorted({p.doi for p in papers if p.doi}))
        aliases = await repo.existing_ids(sorted({alias for p in papers for alias in p.aliases}))
    for paper in papers:
        stored = by_doi.get(paper.doi or "") or next(
            (a for a in paper.aliases if a in aliases), None
        )
        if stored:
            paper.external_id = stored


@dataclass
class _Plan:
    """One batch after the read step: what is new, what changed, and the texts to embed."""

    new: list[PaperRecord]
    changed: list[tuple[int, PaperRecord]]
    chunks: list[tuple[PaperRecord, Chunk]]
    texts: list[str]  # one per chunk
    sentence_keys: list[bytes]  # sentences without a stored vector, embedded after the chunks
    sentences: list[str]
    records: int = 0  # records of the input batch (the progress bar counts them done once written)

    def to_embed(self) -> list[str]:
        return [*self.texts, *self.sentences]


async def _plan_batch(
    sessions: async_sessionmaker[AsyncSession],
    papers: list[PaperRecord],
    report: IngestReport,
    chunk_words: int,
    embedded: set[bytes],
    sentence_vectors: bool = False,
) -> _Plan | None:
    """What `papers` need: new and changed papers' chunks and, with `sentence_vectors`, the sentences
    with no vector, stored or on their way (`embedded`: the keys this ingest has already sent to the
    model; this call adds its own)."""
    from research_corpus.repository import CorpusRepository
    from research_corpus.sentence_vectors import SentenceVectors

    # Every paper's sentences, unchanged ones too: a corpus loaded lazily gets them all on its
    # next ingest with sentence vectors; afterwards the lookup finds them and nothing is embedded.
    sentences = (
        {
            sentence_key(span.text): " ".join(span.text.split())
            for p in papers
            for span in split_sentences(p.abstract)
        }
        if sentence_vectors
        else {}
    )
    async with sessions() as session:
        stored = await CorpusRepository(session).stored([p.external_id for p in papers])
        unknown = await SentenceVectors(session).unknown(list(sentences))
    keys = [key for key in sentences if key in unknown and key not in embedded]
    embedded.update(keys)
    new = [p for p in papers if p.external_id not in stored]
    changed = [
        (stored[p.external_id].paper_id, p)
        for p in papers
        if p.external_id in stored and stored[p.external_id].content_hash != p.content_hash()
    ]
    report.unchanged += len(papers) - len(new) - len(changed)
    if not new and not changed and not keys:
        return None
    chunks = [
        (paper, chunk)
        for paper in [*new, *(p for _, p in changed)]
        for chunk in chunk_paper(paper, chunk_words)
    ]
    texts = [f"{paper.title} {chunk.text}".strip() for paper, chunk in chunks]
    return _Plan(new, changed, chunks, texts, keys, [sentences[key] for key in keys])


async def _write_batch(
    sessions: async_sessionmaker[AsyncSession],
    plan: _Plan,
    embeddings: np.ndarray,
    report: IngestReport,
    model: str | None = None,
    settings: CorpusSettings | None = None,
    bulk: bool = False,
) -> None:
    """One transaction: papers, chunks (COPY), postings, the statistics' deltas and sentence vectors.

    `model` (the embedder's `model_id`) must match the corpus's stamp (`research_corpus.stamp`);
    a stand-in model without one (tests, benchmarks of the writes) is not checked. `bulk`: the
    corpus was empty and its bulk indexes are dropped (`_prepare_bulk`); the lexemes are counted
    when they are built."""
    from research_corpus.repository import CorpusRepository
    from research_corpus.sentence_vectors import SentenceVectors

    chunk_vectors, sentence_vectors = embeddings[: len(plan.texts)], embeddings[len(plan.texts) :]
    async with sessions() as session, session.begin():
        if model is not None:
            await stamp.claim_for_ingest(session, model)
        repo = CorpusRepository(session, settings, bulk=bulk)
        await repo.revise_papers(plan.changed)
        ids = await repo.add_papers(plan.new) | {p.external_id: pid for pid, p in plan.changed}
        await repo.add_chunks(
            [(ids[paper.external_id], paper, chunk) for paper, chunk in plan.chunks], chunk_vectors
        )
        await SentenceVectors(session).keep(plan.sentence_keys, sentence_vectors)
    report.added += len(plan.new)
    report.updated += len(plan.changed)
    report.chunks += len(plan.chunks)
    report.sentences += len(plan.sentence_keys)


async def _prepare_bulk(
    sessions: async_sessionmaker[AsyncSession],
    records: int | None,
    bulk_min_papers: int,
    model: str | None = None,
) -> bool:
    """On an empty corpus: forget stale statistics and, for a large load, drop the chunk indexes.
    First of all, refuse a corpus embedded by another model than `model` (before any embedding)."""
    from research_corpus.repository import CorpusRepository

    async with sessions() as session, session.begin():
        if model is not None:
            await stamp.claim_for_ingest(session, model)
        repo = CorpusRepository(session)
        if not await repo.is_empty():
            await repo.build_bulk_indexes()  # restores indexes a killed bulk load left dropped
            return False
        await repo.reset_statistics()
        if (records or 0) < bulk_min_papers:
            return False
        await repo.drop_bulk_indexes()
        return True


async def _finish_bulk(sessions: async_sessionmaker[AsyncSession]) -> None:
    from research_corpus.repository import CorpusRepository

    async with sessions() as session, session.begin():
        repo = CorpusRepository(session)
        if not await repo.build_bulk_indexes():
            # another bulk load into the same empty corpus ended first and built them: its count
            # of the lexemes missed this load's later batches
            await repo.refresh_lexeme_stats()
    # Outside a transaction, because VACUUM needs that: it also marks the freshly loaded postings
    # all-visible, so BM25's index-only scan of them skips the heap at once instead of after
    # autovacuum's next visit.
    async with sessions() as session:
        connection = await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        await connection.execute(text("ANALYZE corpus_chunks, corpus_lexemes"))
        await connection.execute(text("VACUUM (ANALYZE) corpus_postings"))


BAR_FORMAT = "{desc}: {n_fmt}/{total_fmt} papers |{bar:24}| {percentage:3.0f}% [{elapsed}, {rate_fmt}, ETA {remaining}{postfix}]"


def progress_bar(
    total: int | None, *, enabled: bool = True, file: TextIO | None = None
) -> tqdm[Any]:
    """The ingest's progress bar on stderr: papers done of `total`, papers/s and the time left."""
    return tqdm(
        total=total,
        unit=" papers",
        desc="ingest",
        bar_format=BAR_FORMAT,
        disable=not enabled,
        file=file,
        smoothing=0.1,
    )


def _advance(bar: tqdm[Any], plan: _Plan, report: IngestReport) -> None:
    sentences = f", {report.sentences} sentences" if report.sentences else ""
    bar.set_postfix_str(f"{report.chunks} chunks{sentences}", refresh=False)
    bar.update(plan.records)


def _admit(
    batch: list[PaperRecord | MalformedRecordError], seen: dict[str, int], report: IngestReport
) -> list[PaperRecord]:
    """The batch's papers to ingest; malformed records and repeated ids go to `report.errors`."""
    papers: list[PaperRecord] = []
    for item in batch:
        if isinstance(item, MalformedRecordError):
            report.errors.append(IngestError(line=item.line, reason=item.reason))
        elif item.external_id in seen:
            report.errors.append(
                IngestError(
                    line=item.line,
                    reason=f"duplicate id {item.external_id!r} (first on line {seen[item.external_id]})",
                )
            )
        else:
            seen[item.external_id] = item.line
            papers.append(item)
            report.metadata_only += item.metadata_only
            report.attachments += item.attachment is not None
            report.notes += [IngestError(line=item.line, reason=note) for note in item.notes]
    return papers


class _Pipeline:
    """The model's side of the ingest: one batch at a time is embedded in a worker thread.

    `push(plan)` waits for the batch in the model (if any), hands `plan` to the model and returns
    the finished batch with its vectors, which the caller writes while `plan` is embedded; it then
    reads and plans the next batch, also while the model works. One embedding at a time: two
    would only share the same cores.
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self.embed = embed
        self.current: tuple[_Plan, asyncio.Task[np.ndarray]] | None = None

    async def push(self, plan: _Plan) -> tuple[_Plan, np.ndarray] | None:
        done = await self.drain()
        self.current = (plan, asyncio.create_task(asyncio.to_thread(self.embed, plan.to_embed())))
        return done

    async def drain(self) -> tuple[_Plan, np.ndarray] | None:
        """The batch in the model with its vectors, once embedded (None when the model is idle)."""
        if self.current is None:
            return None
        plan, task = self.current
        vectors = await task
        self.current = None
        return plan, vectors

    async def close(self) -> None:
        """After a failure: let a running embedding finish (a thread cannot be cancelled)."""
        if self.current is not None:
            await asyncio.gather(self.current[1], return_exceptions=True)
            self.current = None


async def ingest_path(
    sessions: async_sessionmaker[AsyncSession],
    path: str | Path,
    fmt: str = "scifact",
    progress: bool = True,
    *,
    embedder: Embedder | None = None,
    chunk_words: int = CHUNK_WORDS,
    batch_papers: int = BATCH_PAPERS,
    bulk_min_papers: int = BULK_MIN_PAPERS,
    sentence_vectors: bool = False,
    settings: CorpusSettings | None = None,
) -> IngestReport:
    """Ingest `path` (`fmt`: scifact | jsonl | pdf-dir | bibtex | ris | csl-json | auto) and report what changed.

    `sentence_vectors`: also embed and store every sentence now (otherwise the first request that
    reads a paper does; see the module doc). `settings`: the corpus group whose BM25 knobs the
    chunks are indexed with (None = its defaults).

    Side effects: inserts/updates `corpus_papers` and `corpus_chunks` and updates the BM25
    statistics (`corpus_lexemes`, `corpus_stats`) by what changed. Malformed records are skipped and listed in
    `report.errors`; valid records around them are kept.
    """
    path, fmt = checked_source(path, fmt)
    embedder = embedder or get_embedder()
    # Bulk texts go straight to the model: they are already batched, and through a process's
    # micro-batching embedder they would also fill (and flush) its vector cache.
    embed = embedder.embed_direct if isinstance(embedder, MicroBatchingEmbedder) else embedder.embed
    report = IngestReport(path=str(path), format=fmt)
    started = time.perf_counter()
    seen: dict[str, int] = {}
    embedded: set[bytes] = set()
    total = _count_records(path, fmt)
    model = getattr(embedder, "model_id", None)
    bulk = await _prepare_bulk(sessions, total, bulk_min_papers, model)
    bar = progress_bar(total, enabled=progress)
    pipeline = _Pipeline(embed)
    try:
        for batch in _batches(_records(path, fmt), batch_papers):
            if fmt in LIBRARY_FORMATS:
                await _adopt_stored_ids(
                    sessions, [item for item in batch if isinstance(item, PaperRecord)]
                )
            papers = _admit(batch, seen, report)
            plan = (
                await _plan_batch(sessions, papers, report, chunk_words, embedded, sentence_vectors)
                if papers
                else None
            )
            if plan is None:
                bar.update(len(batch))  # nothing to embed or write: these records are done
                continue
            plan.records = len(batch)
            if done := await pipeline.push(plan):
                await _write_batch(
                    sessions, *done, report, model, settings, bulk
                )  # while `plan` is embedded
                _advance(bar, done[0], report)
        if done := await pipeline.drain():
            await _write_batch(sessions, *done, report, model, settings, bulk)
            _advance(bar, done[0], report)
    finally:
        await pipeline.close()
        bar.close()
        if bulk:
            await _finish_bulk(sessions)
    report.seconds = round(time.perf_counter() - started, 2)
    log.info(
        "corpus.ingested",
        path=str(path),
        format=fmt,
        **report.counts(),
        errors=len(report.errors),
        metadata_only=report.metadata_only,
        attachments=report.attachments,
        seconds=report.seconds,
        bulk=bulk,
    )
    return report
