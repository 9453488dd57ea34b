"""`CorpusRepository`: how papers and chunks get into Postgres and how BM25 statistics are kept.

Writes are batched: papers with one multi-row INSERT … RETURNING, chunks with one
executemany whose full-text vector (title weight A, text weight B) is computed by Postgres,
then the chunks' BM25 postings with one INSERT … SELECT over their tsvectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_platform.models import EMBEDDING_DIM, CorpusChunk, CorpusPaper

from research_corpus.records import Chunk, PaperRecord


_INSERT_CHUNK = text(
    """INSERT INTO corpus_chunks (paper_id, chunk_index, section, locator, text, embedding, tsv, token_count)
    VALUES (:paper_id, :chunk_index, :section, :locator, :text, :embedding,
            setweight(to_tsvector('english', :title), 'A') || setweight(to_tsvector('english', :text), 'B'),
            0)"""
).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIM)))

_COUNT_TOKENS = text(
    """UPDATE corpus_chunks c SET token_count = coalesce(
        (SELECT sum(coalesce(array_length(u.positions, 1), 1)) FROM unnest(c.tsv) AS u), 0)
    WHERE c.paper_id = ANY(:paper_ids)"""
)

# The BM25 inverted index, read off each chunk's tsvector: occurrences in the text (weight B)
# and in the title (weight A) are kept apart so the title weight stays a query-time setting.
_INDEX_POSTINGS = text(
    """INSERT INTO corpus_postings (lexeme, chunk_id, tf_text, tf_title, doc_len)
    SELECT u.lexeme, c.id,
           cardinality(u.positions) - cardinality(array_positions(u.weights, 'A')),
           cardinality(array_positions(u.weights, 'A')),
           c.token_count
    FROM corpus_chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u
    WHERE c.paper_id = ANY(:paper_ids)"""
)

_REFRESH_LEXEMES = (
    "DELETE FROM corpus_lexemes",
    "INSERT INTO corpus_lexemes (lexeme, doc_freq) SELECT lexeme, count(*) FROM corpus_postings GROUP BY lexeme",
    """INSERT INTO corpus_stats (id, chunks, avg_doc_len)
       SELECT 1, count(*), coalesce(avg(token_count), 0) FROM corpus_chunks
       ON CONFLICT (id) DO UPDATE SET chunks = excluded.chunks, avg_doc_len = excluded.avg_doc_len""",
)


@dataclass
class StoredPaper:
    """What the database already holds about a paper id of the input file."""

    paper_id: int
    content_hash: str


def _paper_row(paper: PaperRecord) -> dict[str, Any]:
    return {
        "external_id": paper.external_id,
        "title": paper.title,
        "abstract": paper.abstract,
        "authors": paper.authors,
        "year": paper.year,
        "venue": paper.venue,
        "doi": paper.doi,
        "citation_count": paper.citation_count,
        "keywords": paper.keywords,
        "content_hash": paper.content_hash(),
    }


class CorpusRepository:
    """Intent-named reads and writes of `corpus_papers`, `corpus_chunks` and `corpus_lexemes`."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def stored(self, external_ids: list[str]) -> dict[str, StoredPaper]:
        """The papers of `external_ids` that are already in the corpus."""
        rows = await self.session.execute(
            select(CorpusPaper.external_id, CorpusPaper.id, CorpusPaper.content_hash).where(
                CorpusPaper.external_id.in_(external_ids)
            )
        )
        return {ext: StoredPaper(pid, digest) for ext, pid, digest in rows}

    async def add_papers(self, papers: list[PaperRecord]) -> dict[str, int]:
        """Insert new papers; returns their database ids by external id."""
        if not papers:
            return {}
        rows = await self.session.execute(
            insert(CorpusPaper).returning(CorpusPaper.external_id, CorpusPaper.id),
            [_paper_row(p) for p in papers],
        )
        return {ext: pid for ext, pid in rows}

    async def revise_papers(self, papers: list[tuple[int, PaperRecord]]) -> None:
        """Overwrite changed papers' metadata and drop their chunks (they are re-chunked)."""
        for paper_id, paper in papers:
            await self.session.execute(update(CorpusPaper).where(CorpusPaper.id == paper_id).values(**_paper_row(paper)))
        if papers:
            await self.session.execute(delete(CorpusChunk).where(CorpusChunk.paper_id.in_([pid for pid, _ in papers])))

    async def add_chunks(self, rows: list[tuple[int, PaperRecord, Chunk]], embeddings: np.ndarray) -> None:
        """Insert chunks with their embeddings (one executemany), then their BM25 lengths."""
        if not rows:
            return
        params = [
            {
                "paper_id": paper_id,
                "chunk_index": chunk.index,
                "section": chunk.section,
                "locator": chunk.locator,
                "text": chunk.text,
                "title": paper.title,
                "embedding": embeddings[i],
            }
            for i, (paper_id, paper, chunk) in enumerate(rows)
        ]
        await self.session.execute(_INSERT_CHUNK, params)
        paper_ids = sorted({pid for pid, _, _ in rows})
        await self.session.execute(_COUNT_TOKENS, {"paper_ids": paper_ids})
        await self.session.execute(_INDEX_POSTINGS, {"paper_ids": paper_ids})

    async def refresh_lexeme_stats(self) -> None:
        """Recompute every lexeme's document frequency (BM25 idf) from the chunks."""
        for statement in _REFRESH_LEXEMES:
            await self.session.execute(text(statement))
