"""Integration: corpus analytics (overview, trends, top cited, metadata search) on a known corpus."""

from __future__ import annotations

import pytest

from research_corpus.analytics import corpus_overview, find_papers, publication_trends, top_cited
from research_corpus.ingest import ingest_path

pytestmark = pytest.mark.integration


@pytest.fixture
async def session(empty_corpus, small_corpus):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    async with empty_corpus() as s:
        yield s


async def test_overview_counts_years_citations_and_venues(session):
    view = await corpus_overview(session)
    assert (view.papers, view.chunks, view.papers_without_year) == (6, 6, 0)
    assert view.papers_per_year == {2009: 1, 2013: 1, 2015: 1, 2018: 1, 2020: 2}
    assert view.papers_with_citations == 5 and view.mean_citations == pytest.approx(
        (120 + 300 + 45 + 210 + 800) / 5
    )
    assert view.top_venues[:2] == [("JAMA", 2), ("Lancet", 2)]


async def test_trends_and_top_cited_for_a_topic(session):
    points = {p.year: (p.papers, p.share) for p in await publication_trends(session, "aspirin")}
    assert points[2018] == (1, 1.0) and points[2020] == (1, 0.5) and points[2015] == (0, 0.0)
    assert [p.year for p in await publication_trends(session, "aspirin", year_from=2019)] == [2020]
    cited = await top_cited(session, "aspirin")
    assert [p.external_id for p in cited] == [
        "aspirin-mi",
        "aspirin-cancer",
    ]  # no citation count sorts last
    assert [p.external_id for p in await top_cited(session, None, k=2)] == [
        "crispr-ecoli",
        "statin-ldl",
    ]


async def test_metadata_search_by_title_author_venue_and_year(session):
    assert [p.external_id for p in await find_papers(session, author="ruiz")] == [
        "aspirin-mi",
        "exercise-hf",
    ]
    assert [p.external_id for p in await find_papers(session, title="VITAMIN")] == ["vitd-fracture"]
    assert [p.external_id for p in await find_papers(session, venue="jama", year_from=2010)] == [
        "vitd-fracture"
    ]
    assert {p.external_id for p in await find_papers(session, year=2020)} == {
        "vitd-fracture",
        "aspirin-cancer",
    }
