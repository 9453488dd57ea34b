"""Load papers into the local corpus: idempotent, incremental, batched, with line-numbered errors.

`ingest_path(sessions, path, fmt)` reads a SciFact or generic JSONL file (or a folder of PDFs),
skips papers whose content is unchanged, re-indexes changed ones, adds new ones, and keeps going
past malformed lines, which it reports with their line numbers. Each batch is one transaction:
embeddings are computed for the whole batch and chunks are written with one executemany.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from tqdm import tqdm

from research_platform.logging import get_logger

from research_corpus.embedding import Embedder, get_embedder
from research_corpus.errors import CorpusError, MalformedRecordError
from research_corpus.records import CHUNK_WORDS, PaperRecord, chunk_paper, detect_format, read_jsonl

BATCH_PAPERS = 256
FORMATS = ("scifact", "jsonl", "pdf-dir")
log = get_logger(__name__)


class IngestError(BaseModel):
    """A record that was not ingested, and why."""

    line: int = Field(description="1-based line of the input file (for a PDF folder: the file's position).")
    reason: str
    source: str | None = Field(default=None, description="The PDF file, for pdf-dir ingests.")


class IngestReport(BaseModel):
    """What one ingest did: counts of papers added / updated / unchanged and every bad record."""

    path: str
    format: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks: int = 0
    errors: list[IngestError] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors


def _batches(items: Iterable[PaperRecord | MalformedRecordError], size: int) -> Iterator[list[PaperRecord | MalformedRecordError]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _records(path: Path, fmt: str) -> Iterator[PaperRecord | MalformedRecordError]:
    if fmt == "pdf-dir":
        from research_corpus.pdf import read_pdf_dir

        return read_pdf_dir(path)
    return read_jsonl(path, fmt)


def _count_records(path: Path, fmt: str) -> int | None:
    if fmt == "pdf-dir":
        return sum(1 for _ in path.glob("**/*.pdf"))
    with path.open("rb") as handle:
        return sum(1 for raw in handle if raw.strip())


async def _ingest_batch(
    sessions: async_sessionmaker[AsyncSession],
    papers: list[PaperRecord],
    embedder: Embedder,
    report: IngestReport,
    chunk_words: int,
) -> None:
    from research_corpus.repository import CorpusRepository

    async with sessions() as session, session.begin():
        repo = CorpusRepository(session)
        stored = await repo.stored([p.external_id for p in papers])
        new = [p for p in papers if p.external_id not in stored]
        changed = [
            (stored[p.external_id].paper_id, p)
            for p in papers
            if p.external_id in stored and stored[p.external_id].content_hash != p.content_hash()
        ]
        report.unchanged += len(papers) - len(new) - len(changed)
        if not new and not changed:
            return
        await repo.revise_papers(changed)
        ids = await repo.add_papers(new)
        targets = [(ids[p.external_id], p) for p in new] + changed
        rows = [(pid, paper, chunk) for pid, paper in targets for chunk in chunk_paper(paper, chunk_words)]
        texts = [f"{paper.title} {chunk.text}".strip() for _, paper, chunk in rows]
        embeddings = await asyncio.to_thread(embedder.embed, texts)
        await repo.add_chunks(rows, embeddings)
        report.added += len(new)
        report.updated += len(changed)
        report.chunks += len(rows)


async def ingest_path(
    sessions: async_sessionmaker[AsyncSession],
    path: str | Path,
    fmt: str = "scifact",
    progress: bool = True,
    *,
    embedder: Embedder | None = None,
    chunk_words: int = CHUNK_WORDS,
    batch_papers: int = BATCH_PAPERS,
) -> IngestReport:
    """Ingest `path` (`fmt`: scifact | jsonl | pdf-dir | auto) and report what changed.

    Side effects: inserts/updates `corpus_papers` and `corpus_chunks`, refreshes
    `corpus_lexemes` when anything changed. Malformed records are skipped and listed in
    `report.errors`; valid records around them are kept.
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path} does not exist")
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise CorpusError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    if (fmt == "pdf-dir") != path.is_dir():
        raise CorpusError(f"format {fmt!r} does not fit {'folder' if path.is_dir() else 'file'} {path}")
    embedder = embedder or get_embedder()
    report = IngestReport(path=str(path), format=fmt)
    started = time.perf_counter()
    seen: dict[str, int] = {}
    bar = tqdm(total=_count_records(path, fmt), unit="paper", desc="ingest", disable=not progress)
    try:
        for batch in _batches(_records(path, fmt), batch_papers):
            papers: list[PaperRecord] = []
            for item in batch:
                if isinstance(item, MalformedRecordError):
                    report.errors.append(IngestError(line=item.line, reason=item.reason))
                elif item.external_id in seen:
                    report.errors.append(
                        IngestError(line=item.line, reason=f"duplicate id {item.external_id!r} (first on line {seen[item.external_id]})")
                    )
                else:
                    seen[item.external_id] = item.line
                    papers.append(item)
            if papers:
                await _ingest_batch(sessions, papers, embedder, report, chunk_words)
            bar.update(len(batch))
    finally:
        bar.close()
    if report.added or report.updated:
        from research_corpus.repository import CorpusRepository

        async with sessions() as session, session.begin():
            await CorpusRepository(session).refresh_lexeme_stats()
    report.seconds = round(time.perf_counter() - started, 2)
    log.info("corpus.ingested", path=str(path), format=fmt, added=report.added, updated=report.updated,
             unchanged=report.unchanged, errors=len(report.errors), seconds=report.seconds)
    return report
