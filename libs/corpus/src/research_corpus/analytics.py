"""Corpus analytics for reports: overview, publication trends and top cited for a topic, metadata search.

A paper is "about" a topic when any of its chunks matches `websearch_to_tsquery(topic)`
(every word must occur; "quoted phrases" and `-excluded` words work as on a search engine). A
chunk's full-text vector (the paper's title, weight A, then the chunk's text, weight B: the one
the ingest derives the BM25 postings from) is not stored; the filter computes it for the chunks
it reads.
All functions are read-only and run in the caller's session.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import Row, text
from sqlalchemy.ext.asyncio import AsyncSession

_TOPIC = """EXISTS (SELECT 1 FROM corpus_chunks c
                    WHERE c.paper_id = p.id
                      AND (setweight(to_tsvector('english', p.title), 'A') || setweight(to_tsvector('english', c.text), 'B'))
                          @@ websearch_to_tsquery('english', :topic))"""


class PaperSummary(BaseModel):
    """A paper's metadata, without its text."""

    paper_id: int
    external_id: str
    title: str
    year: int | None = None
    venue: str | None = None
    authors: list[str] = Field(default_factory=list)
    doi: str | None = None
    citation_count: int | None = None


class CorpusOverview(BaseModel):
    """Size and shape of the corpus."""

    papers: int
    chunks: int
    papers_per_year: dict[int, int] = Field(
        description="Papers by publication year (papers without a year are left out)."
    )
    papers_without_year: int
    mean_citations: float | None = Field(
        description="Mean citation count over papers that have one."
    )
    papers_with_citations: int
    top_venues: list[tuple[str, int]]


class TrendPoint(BaseModel):
    """Papers about a topic in one year, and their share of that year's papers."""

    year: int
    papers: int
    share: float


_SUMMARY = (
    "p.id AS paper_id, p.external_id, p.title, p.year, p.venue, p.authors, p.doi, p.citation_count"
)


def _summaries(rows: Iterable[Row[Any]]) -> list[PaperSummary]:
    return [PaperSummary(**{**row._mapping, "authors": list(row.authors or [])}) for row in rows]


async def corpus_overview(session: AsyncSession, top_venues: int = 10) -> CorpusOverview:
    """Counts of papers and chunks, papers per year, mean citations, the largest venues."""
    totals = (
        await session.execute(
            text(
                """SELECT (SELECT count(*) FROM corpus_papers) AS papers,
                          (SELECT count(*) FROM corpus_chunks) AS chunks,
                          (SELECT count(*) FROM corpus_papers WHERE year IS NULL) AS without_year,
                          (SELECT avg(citation_count)::float8 FROM corpus_papers) AS mean_citations,
                          (SELECT count(citation_count) FROM corpus_papers) AS with_citations"""
            )
        )
    ).one()
    years = await session.execute(
        text(
            "SELECT year, count(*) FROM corpus_papers WHERE year IS NOT NULL GROUP BY year ORDER BY year"
        )
    )
    venues = await session.execute(
        text(
            """SELECT venue, count(*) AS n FROM corpus_papers WHERE venue IS NOT NULL
               GROUP BY venue ORDER BY n DESC, venue LIMIT :limit"""
        ),
        {"limit": top_venues},
    )
    return CorpusOverview(
        papers=totals.papers,
        chunks=totals.chunks,
        papers_per_year={year: n for year, n in years},
        papers_without_year=totals.without_year,
        mean_citations=round(totals.mean_citations, 2)
        if totals.mean_citations is not None
        else None,
        papers_with_citations=totals.with_citations,
        top_venues=[(venue, n) for venue, n in venues],
    )


async def publication_trends(
    session: AsyncSession, topic: str, year_from: int | None = None, year_to: int | None = None
) -> list[TrendPoint]:
    """Per year: how many papers are about `topic`, and what share of that year's papers that is."""
    rows = await session.execute(
        text(
            f"""SELECT p.year, count(*) FILTER (WHERE {_TOPIC}) AS hits, count(*) AS total
                FROM corpus_papers p
                WHERE p.year IS NOT NULL
                  AND (CAST(:year_from AS int) IS NULL OR p.year >= :year_from)
                  AND (CAST(:year_to AS int) IS NULL OR p.year <= :year_to)
                GROUP BY p.year ORDER BY p.year"""  # noqa: S608 - the topic clause is a constant; values are bound
        ),
        {"topic": topic, "year_from": year_from, "year_to": year_to},
    )
    return [
        TrendPoint(year=year, papers=hits, share=round(hits / total, 4))
        for year, hits, total in rows
    ]


async def top_cited(
    session: AsyncSession, topic: str | None = None, k: int = 10
) -> list[PaperSummary]:
    """The `k` most cited papers about `topic` (all papers when no topic); uncounted papers last."""
    where = _TOPIC if topic else "TRUE"
    rows = await session.execute(
        text(
            f"""SELECT {_SUMMARY} FROM corpus_papers p WHERE {where}
                ORDER BY p.citation_count DESC NULLS LAST, p.year DESC NULLS LAST, p.id LIMIT :k"""  # noqa: S608 - constant clauses; values are bound
        ),
        {"topic": topic, "k": k},
    )
    return _summaries(rows)


async def find_papers(
    session: AsyncSession,
    *,
    title: str | None = None,
    author: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    year_from: int | None = None,
    year_to: int | None = None,
    limit: int = 20,
) -> list[PaperSummary]:
    """Metadata search: case-insensitive substrings of title / author / venue, exact year or a range."""
    clauses: list[str] = ["TRUE"]
    params: dict[str, Any] = {"limit": limit}
    if title:
        clauses.append("p.title ILIKE '%' || :title || '%'")
        params["title"] = title
    if author:
        clauses.append(
            "EXISTS (SELECT 1 FROM jsonb_array_elements_text(p.authors) AS a WHERE a ILIKE '%' || :author || '%')"
        )
        params["author"] = author
    if venue:
        clauses.append("p.venue ILIKE '%' || :venue || '%'")
        params["venue"] = venue
    if year is not None:
        clauses.append("p.year = :year")
        params["year"] = year
    if year_from is not None:
        clauses.append("p.year >= :year_from")
        params["year_from"] = year_from
    if year_to is not None:
        clauses.append("p.year <= :year_to")
        params["year_to"] = year_to
    rows = await session.execute(
        text(
            f"""SELECT {_SUMMARY} FROM corpus_papers p WHERE {" AND ".join(clauses)}
                ORDER BY p.year DESC NULLS LAST, p.title, p.id LIMIT :limit"""  # noqa: S608 - constant clauses; values are bound
        ),
        params,
    )
    return _summaries(rows)
