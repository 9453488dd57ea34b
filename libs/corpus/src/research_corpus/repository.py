"""`CorpusRepository`: how papers and chunks get into Postgres and how BM25 statistics are kept.

Writes are bulk: papers are COPYed (asyncpg `copy_records_to_table`) with ids drawn from their
sequence first; chunks are COPYed (binary) into a transaction-local staging table and moved into
`corpus_chunks` with one INSERT … SELECT that lets Postgres compute the full-text vector
(title weight A, text weight B), from which the BM25 length and postings come (the vector
itself is not stored). The chunks' postings and the corpus
statistics (`corpus_lexemes.doc_freq`, `corpus_stats`) are then updated *incrementally* from
the rows just written (and, for re-indexed papers, from the rows about to be deleted), so an
ingest costs what it adds, not what the corpus holds. `refresh_lexeme_stats` recomputes the
statistics from scratch (a repair, and the reference the incremental path is tested against);
a bulk load into an empty corpus (`bulk=True`) leaves the lexemes to it, run once when the
load's indexes are built.
"""

from __future__ import annotations

import json
import struct
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_corpus.records import Chunk, PaperRecord
from research_platform.settings import CorpusSettings
from research_platform.tables import CorpusChunk, CorpusPaper

_STAGING = "corpus_chunk_stage"
_CREATE_STAGING = f"""CREATE TEMP TABLE IF NOT EXISTS {_STAGING} (
    paper_id bigint, chunk_index int, section text, locator text, text text, title text, embedding halfvec
) ON COMMIT DELETE ROWS"""
_STAGING_COLUMNS = ("paper_id", "chunk_index", "section", "locator", "text", "title", "embedding")

# Staged rows -> chunks (their ids drawn here; the full-text vector computed and unnested once,
# the BM25 length summed from it, the vector itself not stored) -> postings -> lexeme doc_freq
# and corpus totals, in one statement: nothing is read back to Python, and the postings come
# from the staged rows (no join back to the chunks). A chunk's length counts each lexeme's
# positions (at least one), as the length of its tsvector's positions did. A bulk load leaves
# the lexemes out (`_LOAD_CHUNKS_BULK`): they are counted once when its indexes are built.
_LOAD_CHUNKS_SQL = f"""WITH staged AS MATERIALIZED (
        SELECT nextval(pg_get_serial_sequence('corpus_chunks', 'id')) AS id,
               l.paper_id, l.chunk_index, l.section, l.locator, l.text, l.embedding,
               setweight(to_tsvector('english', l.title), 'A') || setweight(to_tsvector('english', l.text), 'B') AS tsv
        FROM {_STAGING} l
    ), counted AS MATERIALIZED (
        SELECT s.id AS chunk_id, u.lexeme, cardinality(u.positions) AS positions,
               cardinality(array_positions(u.weights, 'A')) AS tf_title
        FROM staged s CROSS JOIN LATERAL unnest(s.tsv) AS u
    ), lengths AS (
        SELECT chunk_id, sum(greatest(positions, 1)) AS token_count FROM counted GROUP BY chunk_id
    ), chunks AS (
        INSERT INTO corpus_chunks (id, paper_id, chunk_index, section, locator, text, embedding, token_count)
        SELECT s.id, s.paper_id, s.chunk_index, s.section, s.locator, s.text, s.embedding, coalesce(n.token_count, 0)
        FROM staged s LEFT JOIN lengths n ON n.chunk_id = s.id
        RETURNING token_count
    ), corpus AS (  -- the mean length the impacts are normalised by: the corpus's, else this batch's
        SELECT greatest(coalesce(
            (SELECT avg_doc_len FROM corpus_stats WHERE id = 1 AND chunks > 0),
            (SELECT avg(token_count) FROM chunks)), 1)::float8 AS avgdl
    ), postings AS (
        INSERT INTO corpus_postings (chunk_id, impact, tf_text, tf_title, doc_len, lexeme)
        SELECT c.chunk_id,
               (c.positions - c.tf_title + CAST(:title_weight AS float8) * c.tf_title)
               / (1 - CAST(:b AS float8) + CAST(:b AS float8) * n.token_count / corpus.avgdl),
               c.positions - c.tf_title, c.tf_title, least(n.token_count, 32767), c.lexeme
        FROM counted c JOIN lengths n ON n.chunk_id = c.chunk_id, corpus{{lexemes}}
    )
    SELECT count(*) AS chunks, coalesce(sum(token_count), 0) AS tokens FROM chunks"""  # noqa: S608 - a constant table name; values are bound
_COUNT_LEXEMES = """
        RETURNING lexeme
    ), lexemes AS (
        INSERT INTO corpus_lexemes (lexeme, doc_freq)
        SELECT lexeme, count(*) FROM postings GROUP BY lexeme ORDER BY lexeme
        ON CONFLICT (lexeme) DO UPDATE SET doc_freq = corpus_lexemes.doc_freq + excluded.doc_freq"""
_LOAD_CHUNKS = text(_LOAD_CHUNKS_SQL.replace("{lexemes}", _COUNT_LEXEMES))
_LOAD_CHUNKS_BULK = text(_LOAD_CHUNKS_SQL.replace("{lexemes}", ""))

# Before re-indexed papers' chunks are deleted: take their postings out of the statistics.
_FORGET_LEXEMES = text(
    """WITH gone AS (
        SELECT ps.lexeme, count(*) AS n FROM corpus_postings ps JOIN corpus_chunks c ON c.id = ps.chunk_id
        WHERE c.paper_id = ANY(:paper_ids) GROUP BY ps.lexeme ORDER BY ps.lexeme
    )
    UPDATE corpus_lexemes l SET doc_freq = l.doc_freq - gone.n FROM gone WHERE l.lexeme = gone.lexeme"""
)
# A separate statement: rows updated by a CTE are invisible to the rest of the same statement.
_DROP_UNUSED_LEXEMES = text("DELETE FROM corpus_lexemes WHERE doc_freq <= 0")
_FORGET_TOTALS = text(
    "SELECT count(*) AS chunks, coalesce(sum(token_count), 0) AS tokens FROM corpus_chunks WHERE paper_id = ANY(:paper_ids)"
)

# corpus_stats keeps the mean length; the total is mean × count, so a delta can be applied exactly
# enough (float64) without a scan.
_ADD_TOTALS = text(
    """INSERT INTO corpus_stats (id, chunks, avg_doc_len)
       VALUES (1, greatest(CAST(:chunks AS int), 0), CASE WHEN :chunks > 0 THEN CAST(:tokens AS float8) / :chunks ELSE 0 END)
       ON CONFLICT (id) DO UPDATE SET
         chunks = greatest(corpus_stats.chunks + CAST(:chunks AS int), 0),
         avg_doc_len = CASE WHEN corpus_stats.chunks + CAST(:chunks AS int) > 0
             THEN (corpus_stats.avg_doc_len * corpus_stats.chunks + CAST(:tokens AS float8)) / (corpus_stats.chunks + CAST(:chunks AS int))
             ELSE 0 END"""
)

_REFRESH_LEXEMES = (
    "DELETE FROM corpus_lexemes",
    "INSERT INTO corpus_lexemes (lexeme, doc_freq) SELECT lexeme, count(*) FROM corpus_postings GROUP BY lexeme",
    """INSERT INTO corpus_stats (id, chunks, avg_doc_len)
       SELECT 1, count(*), coalesce(avg(token_count), 0) FROM corpus_chunks
       ON CONFLICT (id) DO UPDATE SET chunks = excluded.chunks, avg_doc_len = excluded.avg_doc_len""",
)

# The indexes a bulk load into an empty corpus builds once at the end instead of row by row (same
# names and definitions as the migrations): the chunks' HNSW, and the postings' impact order that
# lexical search reads (a posting's `impact`: see migration 0013; built full: migration 0020).
BULK_INDEXES = {
    "ix_corpus_chunks_embedding": "CREATE INDEX IF NOT EXISTS ix_corpus_chunks_embedding ON corpus_chunks "
    "USING hnsw (embedding halfvec_cosine_ops)",
    "ix_corpus_postings_impact": "CREATE INDEX IF NOT EXISTS ix_corpus_postings_impact ON corpus_postings "
    "(lexeme, impact DESC) INCLUDE (chunk_id, tf_text, tf_title, doc_len) WITH (fillfactor = 100)",
}


# Constraints a bulk load into an empty corpus drops and adds back at the end: the postings' key
# to their chunk, checked once for all rows instead of once per posting (a third of the load's
# statement). Same name and definition as the migrations.
BULK_CONSTRAINTS = {
    "corpus_postings_chunk_id_fkey": "ALTER TABLE corpus_postings ADD CONSTRAINT corpus_postings_chunk_id_fkey"
    " FOREIGN KEY (chunk_id) REFERENCES corpus_chunks (id) ON DELETE CASCADE",
}


def halfvec_binary(vectors: np.ndarray) -> list[bytes]:
    """Each row of `vectors` in pgvector's binary `halfvec` form: dimensions and a reserved word
    (big-endian int16 each), then the coordinates as big-endian IEEE half floats (rounded to
    nearest, ties to even, as the server's own cast rounds)."""
    rows = np.ascontiguousarray(vectors, dtype=np.float32)
    if not np.isfinite(rows).all() or (np.abs(rows) > 65504).any():
        raise ValueError("a vector coordinate is not finite in half precision")
    head = struct.pack(">hh", rows.shape[1] if rows.ndim == 2 else 0, 0)
    return [head + row.tobytes() for row in rows.astype(">f2")]


@dataclass
class StoredPaper:
    """What the database already holds about a paper id of the input file."""

    paper_id: int
    content_hash: str


# A batch's paper ids are drawn first, so the papers can be COPYed (no RETURNING) with them.
_DRAW_PAPER_IDS = text(
    "SELECT nextval(pg_get_serial_sequence('corpus_papers', 'id')) FROM generate_series(1, :n)"
)
_PAPER_COLUMNS = (
    "external_id",
    "title",
    "abstract",
    "authors",
    "year",
    "venue",
    "doi",
    "citation_count",
    "keywords",
    "content_hash",
)


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

    def __init__(
        self,
        session: AsyncSession,
        settings: CorpusSettings | None = None,
        *,
        timings: dict[str, float] | None = None,
        bulk: bool = False,
    ) -> None:
        """`settings`: the corpus group whose BM25 knobs new chunks are indexed with (None = its
        defaults); `timings`: seconds by write step, added up over calls (bench:scale's profile);
        `bulk`: a bulk load into an empty corpus whose indexes are dropped — chunks leave the
        lexemes' document frequencies to `build_bulk_indexes`, which counts them once, so
        concurrent writers share no row but the corpus totals."""
        self.session = session
        self.settings = settings or CorpusSettings()
        self.timings = timings
        self.bulk = bulk

    def _took(self, step: str, started: float) -> float:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings[step] = self.timings.get(step, 0.0) + now - started
        return now

    async def stored(self, external_ids: list[str]) -> dict[str, StoredPaper]:
        """The papers of `external_ids` that are already in the corpus."""
        rows = await self.session.execute(
            select(CorpusPaper.external_id, CorpusPaper.id, CorpusPaper.content_hash).where(
                CorpusPaper.external_id.in_(external_ids)
            )
        )
        return {ext: StoredPaper(pid, digest) for ext, pid, digest in rows}

    async def ids_by_doi(self, dois: list[str]) -> dict[str, str]:
        """The external id each of `dois` (lower case) is stored under, whatever file it came from."""
        if not dois:
            return {}
        rows = await self.session.execute(
            select(func.lower(CorpusPaper.doi), CorpusPaper.external_id)
            .where(func.lower(CorpusPaper.doi).in_(dois))
            .order_by(CorpusPaper.id)
        )
        found: dict[str, str] = {}
        for doi, external_id in rows:
            found.setdefault(
                doi, external_id
            )  # the oldest paper, if an earlier file duplicated one
        return found

    async def existing_ids(self, external_ids: list[str]) -> set[str]:
        """Which of `external_ids` are stored."""
        if not external_ids:
            return set()
        rows = await self.session.execute(
            select(CorpusPaper.external_id).where(CorpusPaper.external_id.in_(external_ids))
        )
        return set(rows.scalars())

    async def add_papers(self, papers: list[PaperRecord]) -> dict[str, int]:
        """Insert new papers (COPYed, with ids drawn first); returns their database ids by external id."""
        if not papers:
            return {}
        started = time.perf_counter()
        ids = list((await self.session.execute(_DRAW_PAPER_IDS, {"n": len(papers)})).scalars())
        records = []
        for paper_id, paper in zip(ids, papers, strict=True):
            row = _paper_row(paper) | {
                "authors": json.dumps(paper.authors),
                "keywords": json.dumps(paper.keywords),
            }
            records.append((paper_id, *(row[column] for column in _PAPER_COLUMNS)))
        await (await self._driver()).copy_records_to_table(
            "corpus_papers", records=records, columns=("id", *_PAPER_COLUMNS)
        )
        self._took("papers", started)
        return {paper.external_id: paper_id for paper_id, paper in zip(ids, papers, strict=True)}

    async def _driver(self) -> Any:
        """asyncpg's connection under the session's, in its transaction (for COPY)."""
        connection = await self.session.connection()
        raw = (await connection.get_raw_connection()).driver_connection
        assert raw is not None, "an open connection has its driver's"
        return raw

    async def revise_papers(self, papers: list[tuple[int, PaperRecord]]) -> None:
        """Overwrite changed papers' metadata and drop their chunks (they are re-chunked).

        Their old postings are subtracted from the BM25 statistics first.
        """
        for paper_id, paper in papers:
            await self.session.execute(
                update(CorpusPaper).where(CorpusPaper.id == paper_id).values(**_paper_row(paper))
            )
        if papers:
            ids = [pid for pid, _ in papers]
            gone = (await self.session.execute(_FORGET_TOTALS, {"paper_ids": ids})).one()
            await self.session.execute(_FORGET_LEXEMES, {"paper_ids": ids})
            await self.session.execute(_DROP_UNUSED_LEXEMES)
            await self.session.execute(
                _ADD_TOTALS, {"chunks": -gone.chunks, "tokens": -float(gone.tokens)}
            )
            await self.session.execute(delete(CorpusChunk).where(CorpusChunk.paper_id.in_(ids)))

    async def add_chunks(
        self, rows: list[tuple[int, PaperRecord, Chunk]], embeddings: np.ndarray
    ) -> None:
        """COPY chunks with their embeddings, index their postings, and add them to the BM25 statistics."""
        if not rows:
            return
        started = time.perf_counter()
        records = [
            (paper_id, chunk.index, chunk.section, chunk.locator, chunk.text, paper.title, vector)
            for (paper_id, paper, chunk), vector in zip(
                rows, halfvec_binary(embeddings), strict=True
            )
        ]
        raw = await self._driver()
        started = self._took("chunk rows", started)
        await raw.execute(_CREATE_STAGING)
        # The vectors go in pgvector's binary form, made by numpy (COPYing them as real[] cost 12x
        # more, in asyncpg's per-float encoding and the server's parsing); the codec is set for the
        # COPY only, so other reads on this pooled connection decode as before.
        await raw.set_type_codec(
            "halfvec", schema="public", encoder=bytes, decoder=bytes, format="binary"
        )
        try:
            await raw.copy_records_to_table(_STAGING, records=records, columns=_STAGING_COLUMNS)
        finally:
            await raw.reset_type_codec("halfvec", schema="public")
        started = self._took("copy", started)
        settings = self.settings
        added = (
            await self.session.execute(
                _LOAD_CHUNKS_BULK if self.bulk else _LOAD_CHUNKS,
                {"b": settings.bm25_b, "title_weight": settings.title_weight},
            )
        ).one()
        started = self._took(
            "chunks+postings sql" if self.bulk else "chunks+postings+lexemes sql", started
        )
        await self.session.execute(text(f"DELETE FROM {_STAGING}"))  # noqa: S608 - a constant table name
        await self.session.execute(
            _ADD_TOTALS, {"chunks": added.chunks, "tokens": float(added.tokens)}
        )
        self._took("totals", started)

    async def is_empty(self) -> bool:
        """True when the corpus holds no chunk (a bulk load may then build its indexes at the end)."""
        return not await self.session.scalar(text("SELECT EXISTS (SELECT 1 FROM corpus_chunks)"))

    async def reset_statistics(self) -> None:
        """Forget the BM25 statistics (the corpus is empty, so they can only be stale)."""
        await self.session.execute(text("DELETE FROM corpus_lexemes"))
        await self.session.execute(text("DELETE FROM corpus_stats"))

    async def drop_bulk_indexes(self) -> None:
        """Drop the bulk indexes and constraints before loading an empty corpus;
        `build_bulk_indexes` restores them."""
        for name in BULK_INDEXES:
            await self.session.execute(text(f"DROP INDEX IF EXISTS {name}"))
        for name in BULK_CONSTRAINTS:
            await self.session.execute(
                text(f"ALTER TABLE corpus_postings DROP CONSTRAINT IF EXISTS {name}")
            )

    async def build_bulk_indexes(self) -> bool:
        """(Re)build the indexes and constraints dropped by `drop_bulk_indexes` that are missing
        (none: no-op).

        Also called before every ingest into a non-empty corpus, so a bulk load that was killed
        outright (no `finally`) gets its indexes back on the next ingest. Whenever something was
        missing, the lexemes' document frequencies and the corpus totals are counted afresh from
        the postings: a bulk load's writers (`bulk=True`) leave them to this step. True when it
        built (and counted) anything.
        """
        present = set(
            (
                await self.session.execute(
                    text(
                        "SELECT indexname FROM pg_indexes"
                        " WHERE tablename IN ('corpus_chunks', 'corpus_postings')"
                    )
                )
            ).scalars()
        )
        present |= set(
            (
                await self.session.execute(
                    text(
                        "SELECT conname FROM pg_constraint"
                        " WHERE conrelid = CAST('corpus_postings' AS regclass)"
                    )
                )
            ).scalars()
        )
        missing = [
            (name, statement)
            for name, statement in (BULK_INDEXES | BULK_CONSTRAINTS).items()
            if name not in present
        ]
        if missing:
            memory = self.settings.index_build_memory_mb
            await self.session.execute(text(f"SET LOCAL maintenance_work_mem = '{memory}MB'"))
        for name, statement in missing:
            started = time.perf_counter()
            await self.session.execute(text(statement))
            self._took(f"index {name}", started)
        if missing:
            started = time.perf_counter()
            await self.refresh_lexeme_stats()
            self._took("lexeme counts", started)
        return bool(missing)

    async def refresh_lexeme_stats(self) -> None:
        """Recompute every lexeme's document frequency and the corpus totals from the chunks (a repair)."""
        for statement in _REFRESH_LEXEMES:
            await self.session.execute(text(statement))
