"""Integration: hybrid / lexical / dense search on a small hand-checked corpus (real model, real Postgres)."""

from __future__ import annotations

import pytest

from research_corpus.errors import CorpusError
from research_corpus.ingest import ingest_path
from research_corpus.search import SearchFilters, search
from research_platform.settings import CorpusSettings
from tests.corpus.pdf_builder import write_pdf

pytestmark = pytest.mark.integration


@pytest.fixture
async def corpus(empty_corpus, small_corpus):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    return empty_corpus


async def _ids(sessions, query, **kwargs) -> list[str]:
    async with sessions() as session:
        return [h.external_id for h in await search(session, query, **kwargs)]


async def test_hybrid_is_the_reciprocal_rank_fusion_of_the_two_rankings(corpus):
    settings = CorpusSettings(
        rrf_k=60, lexical_weight=1.0, dense_weight=1.0
    )  # the hand check below uses these
    query = "aspirin to prevent coronary attacks"
    async with corpus() as session:
        lexical = await search(session, query, k=10, mode="lexical", settings=settings)
    async with corpus() as session:
        dense = await search(session, query, k=10, mode="dense", settings=settings)
    async with corpus() as session:
        hybrid = await search(session, query, k=10, mode="hybrid", settings=settings)
    # Hand check: only the aspirin papers match lexically; the heart-attack one is closest in meaning.
    assert {h.external_id for h in lexical} == {"aspirin-mi", "aspirin-cancer"}
    assert dense[0].external_id == "aspirin-mi" and len(dense) == 6
    lex_rank = {h.external_id: r for r, h in enumerate(lexical, 1)}
    dense_rank = {h.external_id: r for r, h in enumerate(dense, 1)}
    expected = sorted(
        dense_rank,
        key=lambda d: (
            -((1 / (60 + lex_rank[d]) if d in lex_rank else 0) + 1 / (60 + dense_rank[d]))
        ),
    )
    assert [h.external_id for h in hybrid] == expected
    top = hybrid[0]
    assert top.external_id == "aspirin-mi" and (top.lexical_rank, top.dense_rank) == (
        lex_rank["aspirin-mi"],
        1,
    )
    assert top.score == pytest.approx(1 / (60 + lex_rank["aspirin-mi"]) + 1 / 61)
    assert top.passage in top.abstract and top.locator == "abstract"
    assert (top.year, top.venue, top.authors) == (2018, "Lancet", ["Ana Ruiz", "Bo Chen"])


async def test_dense_finds_meaning_without_shared_words(corpus):
    assert (await _ids(corpus, "genome editing tools in microbes", k=1, mode="dense")) == [
        "crispr-ecoli"
    ]
    assert "crispr-ecoli" not in await _ids(
        corpus, "genome editing tools in microbes", k=6, mode="lexical"
    )


async def test_filters_year_range_and_venue_apply_in_every_mode(corpus):
    for mode in ("hybrid", "lexical", "dense"):
        recent = await _ids(
            corpus,
            "aspirin vitamin cancer fracture",
            k=10,
            mode=mode,
            filters=SearchFilters(year_from=2019),
        )
        assert set(recent) <= {"vitd-fracture", "aspirin-cancer"} and recent
        lancet = await _ids(
            corpus, "aspirin", k=10, mode=mode, filters=SearchFilters(venue="lancet")
        )
        assert set(lancet) == {"aspirin-mi", "aspirin-cancer"}
        old = await _ids(
            corpus, "heart failure exercise", k=10, mode=mode, filters=SearchFilters(year_to=2010)
        )
        assert old == ["exercise-hf"]
        none = await _ids(corpus, "aspirin", k=10, mode=mode, filters=SearchFilters(year_from=2030))
        assert none == []


async def test_section_filter_returns_the_matching_section_passage(empty_corpus, tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_pdf(
        folder / "zinc.pdf",
        [
            "Zinc lozenges and the common cold",
            "Abstract",
            "Zinc lozenges shortened colds in adults.",
            "Methods",
            "We randomised 200 adults to zinc or placebo lozenges.",
            "Results",
            "Colds were shorter with zinc.",
        ],
    )
    await ingest_path(empty_corpus, folder, fmt="pdf-dir", progress=False)
    async with empty_corpus() as session:
        hits = await search(
            session, "zinc lozenges colds", k=5, filters=SearchFilters(section="methods")
        )
    assert [(h.external_id, h.locator, h.section) for h in hits] == [
        ("zinc.pdf", "section:methods", "methods")
    ]
    assert "randomised 200 adults" in hits[0].passage


async def test_empty_query_and_unknown_mode(corpus):
    assert await _ids(corpus, "   ") == []
    async with corpus() as session:
        with pytest.raises(CorpusError):
            await search(session, "aspirin", mode="fuzzy")
