"""Hybrid paper search over the local corpus: BM25 on Postgres full text + pgvector cosine kNN.

Each ranking is computed over `corpus_chunks`, aggregated to papers (a paper ranks where its
best chunk ranks) and the two are fused by weighted reciprocal rank fusion:

    score(paper) = lexical_weight / (rrf_k + lexical_rank) + dense_weight / (rrf_k + dense_rank)

The hit's passage is the chunk with the best fused chunk-level score. Filters (year range,
venue, section) apply inside both rankings, before the cut to `candidates`. The dense query
vector passes through the learned query adapter (`research_corpus.query_adapter`) when
`settings.query_adapter` is on; chunk vectors are plain MiniLM.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_corpus import stamp
from research_corpus.analytics import PaperSummary
from research_corpus.embedding import Embedder, get_embedder
from research_corpus.errors import CorpusError
from research_corpus.query_adapter import get_query_adapter
from research_corpus.ranking import ChunkHit, Ranked, fuse, rank_papers
from research_platform.settings import CorpusSettings

SearchMode = Literal["hybrid", "lexical", "dense"]
MODES = ("hybrid", "lexical", "dense")
CHUNKS_PER_PAPER = (
    2  # chunk candidates fetched per wanted paper, so aggregation still fills the list
)
SEARCH_CONCURRENCY = 4  # searches of a batch in flight at once (each holds one pooled connection)


class SearchFilters(BaseModel):
    """Restrict a search to a year range, a venue (case-insensitive) and/or a section type."""

    year_from: int | None = None
    year_to: int | None = None
    venue: str | None = None
    section: str | None = Field(
        default=None, description="Chunk section, e.g. abstract, methods, results."
    )

    def sql(self) -> tuple[str, dict[str, object]]:
        """A SQL condition on `c` (chunks) and `p` (papers), and its parameters."""
        clauses: list[str] = ["TRUE"]
        params: dict[str, object] = {}
        if self.year_from is not None:
            clauses.append("p.year >= :year_from")
            params["year_from"] = self.year_from
        if self.year_to is not None:
            clauses.append("p.year <= :year_to")
            params["year_to"] = self.year_to
        if self.venue:
            clauses.append("lower(p.venue) = lower(:venue)")
            params["venue"] = self.venue
        if self.section:
            clauses.append("c.section = :section")
            params["section"] = self.section
        return " AND ".join(clauses), params

    @property
    def empty(self) -> bool:
        return all(v in (None, "") for v in self.model_dump().values())


class PaperHit(PaperSummary):
    """One paper found by a search, with the passage that matched best."""

    external_id: str = Field(description="The paper's id in the ingested file.")
    score: float
    passage: str = Field(description="The best-matching chunk of the paper.")
    locator: str = Field(
        description="Where the passage is: `abstract`, `section:methods chunk 2` …"
    )
    section: str = "abstract"
    abstract: str = Field(description="The paper's full abstract/text, to verify quotes against.")
    lexical_rank: int | None = None
    dense_rank: int | None = None


# BM25 over the postings of the query's lexemes only (an index range scan per lexeme);
# tf = text occurrences + title_weight * title occurrences. Unfiltered, each lexeme contributes
# its `lexical_depth` postings of highest impact (the order of its BM25 term score, read from the
# index `(lexeme, impact DESC)`), so a query's cost is bounded whatever the corpus's size: a
# chunk beyond a common lexeme's prefix loses only that lexeme's (low-idf) share of its score.
_LEXICAL = """
WITH query_terms AS (
    SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('english', :query)) AS u
), corpus AS (
    SELECT chunks::float8 AS n, greatest(avg_doc_len, 1)::float8 AS avgdl FROM corpus_stats WHERE id = 1
), weighted AS MATERIALIZED (  -- idf once per lexeme, in float8 (inlined, it was numeric, per posting)
    SELECT t.lexeme, ln(1 + (corpus.n - l.doc_freq + 0.5) / (l.doc_freq::float8 + 0.5)) AS idf
    FROM query_terms t JOIN corpus_lexemes l ON l.lexeme = t.lexeme, corpus
), params AS (  -- typed here: left untyped, asyncpg would bind 1.2 as the integer 1
    SELECT CAST(:k1 AS float8) AS k1, CAST(:b AS float8) AS b, CAST(:title_weight AS float8) AS title_weight
), scored AS (
    SELECT ps.chunk_id, sum(
        w.idf * (f.tf * (params.k1 + 1)) / (f.tf + params.k1 * (1 - params.b + params.b * ps.doc_len / corpus.avgdl))
    ) AS score
    FROM weighted w
    CROSS JOIN LATERAL (
        SELECT p.chunk_id, p.tf_text, p.tf_title, p.doc_len FROM corpus_postings p
        WHERE p.lexeme = w.lexeme {prefix}
    ) AS ps
    CROSS JOIN corpus
    CROSS JOIN params
    CROSS JOIN LATERAL (SELECT ps.tf_text + params.title_weight * ps.tf_title AS tf) AS f
    GROUP BY ps.chunk_id
    {early_cut}
)
SELECT c.id, c.paper_id, s.score
FROM scored s JOIN corpus_chunks c ON c.id = s.chunk_id {join}
WHERE {filters}
ORDER BY s.score DESC, c.id
LIMIT :limit
"""

_DENSE = """
SELECT c.id, c.paper_id, 1 - (c.embedding <=> CAST(:vector AS halfvec)) AS score
FROM corpus_chunks c {join}
WHERE {filters}
ORDER BY c.embedding <=> CAST(:vector AS halfvec)
LIMIT :limit
"""

_HITS = """
SELECT c.id AS chunk_id, c.text AS passage, c.locator, c.section, p.id, p.external_id, p.title, p.year,
       p.venue, p.authors, p.doi, p.citation_count, p.abstract
FROM corpus_chunks c JOIN corpus_papers p ON p.id = c.paper_id
WHERE c.id = ANY(:ids)
"""


async def lexical_chunks(
    session: AsyncSession, query: str, limit: int, filters: SearchFilters, settings: CorpusSettings
) -> list[ChunkHit]:
    """Chunks ranked by BM25 (title occurrences weighted `title_weight`), best first."""
    where, params = filters.sql()
    join = "JOIN corpus_papers p ON p.id = c.paper_id" if "p." in where else ""
    # Without filters the top chunks can be cut before the join, and each lexeme read to its
    # depth only; with filters, every posting is scored and the cut comes after the join (a
    # filter could reject a whole prefix).
    early_cut = "ORDER BY score DESC, ps.chunk_id LIMIT :limit" if filters.empty else ""
    truncate = filters.empty and settings.lexical_depth > 0
    prefix = "ORDER BY p.impact DESC LIMIT :depth" if truncate else ""
    rows = await session.execute(
        text(_LEXICAL.format(filters=where, join=join, early_cut=early_cut, prefix=prefix)),
        {
            "query": query,
            "limit": limit,
            **({"depth": settings.lexical_depth} if truncate else {}),
            "k1": settings.bm25_k1,
            "b": settings.bm25_b,
            "title_weight": settings.title_weight,
            **params,
        },
    )
    return [ChunkHit(chunk_id, paper_id, float(score)) for chunk_id, paper_id, score in rows]


async def dense_chunks(
    session: AsyncSession,
    vector: Sequence[float],
    limit: int,
    filters: SearchFilters,
    model: str | None = None,
) -> list[ChunkHit]:
    """Chunks ranked by cosine similarity to `vector` (HNSW; iterative scan under filters).

    `model` is the `model_id` of the embedder that made `vector`: `EmbeddingModelMismatch` is
    raised when the corpus's vectors come from another one (`research_corpus.stamp`)."""
    where, params = filters.sql()
    # One round trip for the transaction-local knobs: HNSW must return `limit` rows (ef_search),
    # keep scanning past filtered-out rows (iterative scan), and the planner must not prefer a
    # sequential scan, which detoasts every embedding (4x slower on SciFact's 8k chunks). The
    # same round trip reads which model made the corpus's vectors.
    knobs = await session.execute(
        text(
            "SELECT set_config('hnsw.ef_search', :ef, true), set_config('enable_seqscan', 'off', true),"
            f" set_config('hnsw.iterative_scan', :iterative, true), {stamp.STORED_MODEL_SQL} AS model,"
            f" {stamp.REEMBEDDING_TO_SQL} AS reembedding_to"
        ),
        {
            "ef": str(max(40, min(limit, 1000))),
            "iterative": "off" if filters.empty else "relaxed_order",
        },
    )
    stored = knobs.one()
    stamp.check(stored.model, stored.reembedding_to, model)
    literal = "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
    # Join papers only when a paper column is filtered, so the planner keeps the plain HNSW scan.
    join = "JOIN corpus_papers p ON p.id = c.paper_id" if "p." in where else ""
    rows = await session.execute(
        text(_DENSE.format(join=join, filters=where)), {"vector": literal, "limit": limit, **params}
    )
    hits = [ChunkHit(chunk_id, paper_id, float(score)) for chunk_id, paper_id, score in rows]
    hits.sort(
        key=lambda h: (-h.score, h.chunk_id)
    )  # relaxed_order may return slightly out of order
    return hits


async def _hydrate(session: AsyncSession, ranked: list[Ranked]) -> list[PaperHit]:
    if not ranked:
        return []
    rows = {
        row.chunk_id: row
        for row in await session.execute(text(_HITS), {"ids": [r.chunk_id for r in ranked]})
    }
    hits = []
    for r in ranked:
        row = rows[r.chunk_id]
        hits.append(
            PaperHit(
                paper_id=row.id,
                external_id=row.external_id,
                title=row.title,
                year=row.year,
                venue=row.venue,
                authors=list(row.authors or []),
                doi=row.doi,
                citation_count=row.citation_count,
                score=r.score,
                passage=row.passage,
                locator=row.locator,
                section=row.section,
                abstract=row.abstract,
                lexical_rank=r.lexical_rank,
                dense_rank=r.dense_rank,
            )
        )
    return hits


def query_vectors(
    queries: list[str], embedder: Embedder | None = None, settings: CorpusSettings | None = None
) -> np.ndarray:
    """The dense-search vectors of `queries`: MiniLM, then the query adapter when it is on
    (`settings`: the corpus group; None = its defaults)."""
    settings = settings or CorpusSettings()
    vectors = (embedder or get_embedder()).embed(queries)
    return get_query_adapter().apply(vectors) if settings.query_adapter else vectors


async def search(
    session: AsyncSession,
    query: str,
    k: int = 10,
    mode: SearchMode = "hybrid",
    filters: SearchFilters | None = None,
    settings: CorpusSettings | None = None,
    *,
    vector: Sequence[float] | None = None,
    model: str | None = None,
) -> list[PaperHit]:
    """The `k` best papers for `query`, best first (`mode`: hybrid | lexical | dense).

    `vector` is the query's dense vector when the caller already has it (`search_many` embeds
    a whole batch at once); otherwise it is computed here. `model` is the `model_id` of the
    embedder the vector comes from (default: the process's, `get_embedder()`); a corpus embedded
    by another model raises `EmbeddingModelMismatch` instead of being searched with it. Read-only; runs in the caller's
    session (a transaction is opened if none is active, so the HNSW settings stay local to it).
    `settings` is the corpus group (fusion, BM25, candidates; None = its defaults).
    """
    if mode not in MODES:
        raise CorpusError(f"unknown search mode {mode!r}: use one of {', '.join(MODES)}")
    query = (query or "").strip()
    if not query or k <= 0:
        return []
    settings = settings or CorpusSettings()
    filters = filters or SearchFilters()
    papers_wanted = max(settings.candidates, k)
    limit = papers_wanted * CHUNKS_PER_PAPER
    lexical: list[ChunkHit] = []
    dense: list[ChunkHit] = []
    if mode in ("hybrid", "dense") and vector is None:
        vector = (await asyncio.to_thread(query_vectors, [query], None, settings))[0].tolist()
    if not session.in_transaction():
        await session.begin()
    if mode in ("hybrid", "lexical"):
        lexical = await lexical_chunks(session, query, limit, filters, settings)
    if mode in ("hybrid", "dense") and vector is not None:
        dense = await dense_chunks(
            session, vector, limit, filters, model or get_embedder().model_id
        )
    if mode == "hybrid":
        ranked = fuse(lexical, dense, settings, papers_wanted)
    else:
        ranked = rank_papers(
            lexical or dense, papers_wanted, "lexical" if mode == "lexical" else "dense"
        )
    hits = await _hydrate(session, ranked[:k])
    return hits


async def search_many(
    sessions: async_sessionmaker[AsyncSession],
    queries: list[str],
    k: int = 10,
    mode: SearchMode = "hybrid",
    filters: SearchFilters | None = None,
    settings: CorpusSettings | None = None,
    embedder: Embedder | None = None,
    *,
    concurrency: int = SEARCH_CONCURRENCY,
) -> list[list[PaperHit]]:
    """`search` for a batch of queries, results in the order of `queries`.

    One embedding call for all of them, then the searches `concurrency` at a time, each on its
    own session: while one query's SQL runs in Postgres, the next one's is sent and the last
    one's rows are turned into hits, so both cores work (one at a time left Postgres idle while
    Python worked and the reverse). `settings`: the corpus group (None = its defaults)."""
    settings = settings or CorpusSettings()
    vectors: list[list[float] | None] = [None] * len(queries)
    if mode in ("hybrid", "dense") and queries:
        vectors = (
            await asyncio.to_thread(
                query_vectors, [q.strip() or " " for q in queries], embedder, settings
            )
        ).tolist()
    results: list[list[PaperHit]] = [[] for _ in queries]
    pending = iter(range(len(queries)))  # shared by the workers: each takes the next index

    async def worker() -> None:
        for index in pending:
            async with sessions() as session:
                results[index] = await search(
                    session,
                    queries[index],
                    k,
                    mode,
                    filters,
                    settings,
                    vector=vectors[index],
                    model=(embedder or get_embedder()).model_id,
                )

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(queries))))]
    try:
        await asyncio.gather(*workers)
    except BaseException:  # a failing search stops the others before its error reaches the caller
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    return results
