"""Hits for the scout tests: recorded connector responses (../shared/fixtures) parsed by the
connector's own parsers, plus small hand-made hits whose text the assertions can name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_contracts import SourceHit

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


def recorded() -> list[SourceHit]:
    """Europe PMC + CrossRef + Semantic Scholar recorded answers, as the connector parses them."""
    from research_connector.sources import crossref, europepmc, semantic_scholar

    if not FIXTURES.exists():
        pytest.skip(
            "../shared is not present: the recorded connector responses are needed for this test"
        )
    read = lambda name: json.loads((FIXTURES / name).read_text())
    return [
        *europepmc.parse_search(read("europepmc/fastpaper_europepmc_search.json")),
        *crossref.parse_works(read("crossref/habanero_cassette_test_works_query__00.json")),
        *semantic_scholar.parse_search(
            read("semantic_scholar/danielnsilva_cassette_test_search_paper__00.json")
        )[:10],
    ]


def paper(
    n: int,
    title: str,
    abstract: str,
    *,
    source: str = "pubmed",
    doi: str | None = None,
    year: int = 2020,
    retracted: bool = False,
    venue: str = "Journal of Tests",
) -> SourceHit:
    return SourceHit(
        source_id=f"pmid:{9000 + n}",
        source=source,
        title=title,
        abstract=abstract,
        year=year,
        doi=doi,
        venue=venue,
        authors=[f"Author {n}"],
        metadata={"retracted": retracted},
    )


VITAMIN_D = [
    paper(
        1,
        "Vitamin D supplementation and fracture risk in older adults: a meta-analysis",
        "We conducted a meta-analysis of 11 randomized controlled trials with 31,022 older adults. "
        "Vitamin D supplementation of 800 IU daily reduced hip fracture risk by 30% (HR 0.70). "
        "Lower doses may not prevent fractures.",
        doi="10.1000/vitd.1",
    ),
    paper(
        2,
        "Fracture risk after vitamin D supplementation in nursing home residents",
        "In a cohort of 2,300 residents, supplementation with vitamin D lowered fracture incidence. "
        "Older adults living in nursing homes with low baseline vitamin D levels had the largest reduction in hip "
        "fracture risk.",
        doi="10.1000/vitd.2",
    ),
    paper(
        3,
        "Calcium and bone density in adolescents",
        "Dairy intake was associated with higher bone density in teens. "
        "Calcium supplements had no effect on height.",
        doi="10.1000/calc.3",
    ),
    paper(
        4,
        "Vitamin D status and falls",
        "Vitamin D deficiency is common in older adults. Falls were more frequent "
        "in deficient participants.",
        doi="10.1000/vitd.4",
    ),
]
