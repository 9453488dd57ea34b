"""Re-embed the whole corpus with the running embedder: `research-engine corpus reembed`.

A corpus embedded with one model or precision (`all-MiniLM-L6-v2/fp32`) is converted to the
process embedder's (`CORPUS__EMBED_PRECISION`, `…/int8`): every chunk vector and every sentence
vector is recomputed from the text the ingest embedded (a chunk: `title + " " + chunk text`; a
sentence: its paper's abstract split as the ingest splits it), papers in batches, each batch's
texts in one model call and its updates in one transaction. Lexical data (postings, statistics)
is not touched.

While it runs, the stamp (`research_corpus.stamp`) says `reembedding_to`, so searches and
ingests refuse the half-converted corpus instead of mixing two vector spaces; the stamp names
the new model only once every vector is converted. Killed half way, the command is simply run
again (the stamp still says `reembedding_to`; every vector is recomputed, which is idempotent).
The HNSW index is dropped first and built once at the end (cheaper than maintaining it under
~N updates). Sentence vectors whose text no stored paper holds any more (left by papers that
changed) cannot be recomputed and are deleted; the report counts them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np
from pydantic import BaseModel
from sqlalchemy import CursorResult, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_corpus import stamp
from research_corpus.sentences import sentence_key, split_sentences
from research_platform.logging import get_logger

BATCH_PAPERS = 256
log = get_logger(__name__)


class _Model(Protocol):
    @property
    def model_id(self) -> str: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


class ReembedReport(BaseModel):
    """What one `reembed` did."""

    previous: str | None
    model: str
    papers: int = 0
    chunks: int = 0
    sentences: int = 0
    orphan_sentences_deleted: int = 0
    seconds: float = 0.0
    skipped: bool = False


_PAPERS = text(
    "SELECT id, title, abstract FROM corpus_papers WHERE id > :after ORDER BY id LIMIT :limit"
)
_CHUNKS = text(
    "SELECT c.id, c.paper_id, c.text FROM corpus_chunks c WHERE c.paper_id = ANY(:ids) ORDER BY c.id"
)


@dataclass(frozen=True)
class _Staging:
    """A temporary table the new vectors of one corpus table are copied into, then set from."""

    name: str
    key: str  # the key column, named alike in the staging and the corpus table
    key_type: str
    table: str
    vector_type: str


_CHUNK_STAGING = _Staging("corpus_reembed_chunks", "id", "bigint", "corpus_chunks", "halfvec")
_SENTENCE_STAGING = _Staging(
    "corpus_reembed_sentences", "key", "bytea", "corpus_sentences", "vector"
)


async def _raw(session: AsyncSession) -> Any:  # asyncpg's connection (COPY into staging)
    connection = await session.connection()
    return (await connection.get_raw_connection()).driver_connection


async def _write(
    session: AsyncSession,
    chunk_ids: list[int],
    chunk_vectors: np.ndarray,
    keys: list[bytes],
    sentence_vectors: np.ndarray,
) -> None:
    staged = (
        (_CHUNK_STAGING, chunk_ids, chunk_vectors),
        (_SENTENCE_STAGING, keys, sentence_vectors),
    )
    # Through the session first: that opens its transaction, so the COPYs below land in it (on
    # the bare driver connection they would commit alone and their rows be deleted at once).
    for staging, _, _ in staged:
        await session.execute(
            text(
                f"CREATE TEMP TABLE IF NOT EXISTS {staging.name} "
                f"({staging.key} {staging.key_type}, embedding real[]) ON COMMIT DELETE ROWS"
            )
        )
    raw = await _raw(session)
    for staging, ids, vectors in staged:
        if not ids:
            continue
        await raw.copy_records_to_table(
            staging.name,
            records=list(zip(ids, vectors.astype(np.float32).tolist(), strict=True)),
            columns=(staging.key, "embedding"),
        )
        await session.execute(
            text(
                f"UPDATE {staging.table} t SET embedding = CAST(s.embedding AS {staging.vector_type}) "  # noqa: S608 - constant names
                f"FROM {staging.name} s WHERE t.{staging.key} = s.{staging.key}"
            )
        )


async def reembed(
    sessions: async_sessionmaker[AsyncSession],
    embedder: _Model,
    *,
    force: bool = False,
    batch_papers: int = BATCH_PAPERS,
    progress: bool = False,
) -> ReembedReport:
    """Recompute every corpus vector with `embedder` and stamp the corpus with its `model_id`.

    Does nothing when the corpus is already stamped with that model (unless `force`). Side
    effects: rewrites `corpus_chunks.embedding` and `corpus_sentences.embedding`, deletes orphan
    sentence vectors, drops and rebuilds the HNSW index, updates `corpus_embedding`."""
    from research_corpus.ingest import progress_bar

    target = embedder.model_id
    started = time.perf_counter()
    async with sessions() as session, session.begin():
        current = await stamp.read(session)
        report = ReembedReport(previous=current and current.model, model=target)
        papers_total = int(
            (await session.execute(text("SELECT count(*) FROM corpus_papers"))).scalar_one()
        )
        done = current is not None and current.model == target and current.reembedding_to is None
        if done and not force:
            report.skipped = True
            return report
        await stamp.write(session, current.model if current else target, target)
        await session.execute(text("DROP INDEX IF EXISTS ix_corpus_chunks_embedding"))
    log.info("corpus.reembedding", previous=report.previous, model=target, papers=papers_total)
    bar = progress_bar(papers_total, enabled=progress)
    bar.set_description("reembed")
    seen: set[bytes] = set()
    after = 0
    try:
        while True:
            async with sessions() as session:
                papers = (
                    await session.execute(_PAPERS, {"after": after, "limit": batch_papers})
                ).all()
                if not papers:
                    break
                titles = {p.id: p.title for p in papers}
                chunks = (await session.execute(_CHUNKS, {"ids": list(titles)})).all()
            sentences: dict[bytes, str] = {}
            for paper in papers:
                for span in split_sentences(paper.abstract or ""):
                    key = sentence_key(span.text)
                    if key not in seen:
                        sentences.setdefault(key, " ".join(span.text.split()))
            texts = [f"{titles[c.paper_id]} {c.text}".strip() for c in chunks]
            vectors = embedder.embed([*texts, *sentences.values()])
            async with sessions() as session, session.begin():
                await _write(
                    session,
                    [c.id for c in chunks],
                    vectors[: len(texts)],
                    list(sentences),
                    vectors[len(texts) :],
                )
            seen.update(sentences)
            after = papers[-1].id
            report.papers += len(papers)
            report.chunks += len(chunks)
            report.sentences += len(sentences)
            bar.set_postfix_str(
                f"{report.chunks} chunks, {report.sentences} sentences", refresh=False
            )
            bar.update(len(papers))
    finally:
        bar.close()
    report.orphan_sentences_deleted = await _finish(sessions, seen, target)
    report.seconds = round(time.perf_counter() - started, 2)
    log.info("corpus.reembedded", **report.model_dump())
    return report


async def _finish(sessions: async_sessionmaker[AsyncSession], seen: set[bytes], target: str) -> int:
    """Delete the sentence vectors no stored paper holds, rebuild the HNSW index, stamp the corpus
    with `target` and vacuum; the number of sentence vectors deleted."""
    from research_corpus.repository import BULK_INDEXES

    async with sessions() as session, session.begin():
        # Sentence vectors no stored paper holds: their text is gone, so they cannot be converted.
        await session.execute(
            text("CREATE TEMP TABLE corpus_reembed_seen (key bytea PRIMARY KEY) ON COMMIT DROP")
        )
        raw = await _raw(session)
        await raw.copy_records_to_table(
            "corpus_reembed_seen", records=[(k,) for k in seen], columns=("key",)
        )
        deleted = await session.execute(
            text(
                "DELETE FROM corpus_sentences t WHERE NOT EXISTS "
                "(SELECT 1 FROM corpus_reembed_seen s WHERE s.key = t.key)"
            )
        )
        orphans = int(cast(CursorResult[Any], deleted).rowcount or 0)
        await session.execute(text("SET LOCAL maintenance_work_mem = '256MB'"))
        await session.execute(text(BULK_INDEXES["ix_corpus_chunks_embedding"]))
        await stamp.write(session, target)
    async with sessions() as session:
        connection = await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
        await connection.execute(text("VACUUM (ANALYZE) corpus_chunks, corpus_sentences"))
    return orphans
