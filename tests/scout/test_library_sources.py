"""A researcher's own library in a source list (issue 27): a Zotero-style BibTeX export ingested
through the real corpus path, searched by the connector's own corpus source, listed by the scout
on real NATS + Postgres. A source drawn from the library carries the record's authors, venue,
year and DOI, and the stored list's exports (Markdown, BibTeX, RIS, CSL-JSON) say them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path

import bibtexparser
import nats
import pytest
import rispy
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_connector.sources.corpus import CorpusSource
from research_contracts import EvidenceFound, SearchEvidence
from research_contracts.sourcelists import RequestSourceList
from research_corpus.ingest import ingest_path
from research_ledger import UnitOfWork
from research_platform.settings import CorpusSettings
from research_reports import Report, export_report

pytestmark = pytest.mark.integration
LIBRARY = Path(__file__).parents[1] / "reviewer" / "library" / "coral.bib"
ORTEGA_DOI = "10.1038/s41561-019-0412-5"
ORTEGA_AUTHORS = ["Sofía Ortega", "Lars Øberg", "Mei Tanaka"]


@asynccontextmanager
async def corpus_connector(
    nc: nats.NATS, subject: str, sessions: async_sessionmaker[AsyncSession]
) -> AsyncIterator[None]:
    """Answers every search on `subject` from the corpus, through the connector's `corpus` source
    (the hits it builds from the stored papers are what the scout gets from the real connector)."""
    corpus = CorpusSource(sessions, CorpusSettings())

    async def answer(msg) -> None:
        ask = SearchEvidence.model_validate_json(msg.data)
        hits = await corpus.search(ask.query, ask.filters, ask.limit, ask.mode)
        await msg.respond(EvidenceFound(hits=hits).model_dump_json().encode())

    sub = await nc.subscribe(subject, cb=answer)
    try:
        yield
    finally:
        await sub.unsubscribe()


async def test_a_source_from_the_library_carries_its_authors_venue_year_and_doi(
    nc, sessions, scout_factory, unique
):
    ingested = await ingest_path(
        sessions, LIBRARY, fmt="bibtex", progress=False
    )  # re-ingest updates by DOI
    assert ingested.added + ingested.updated + ingested.unchanged == 3 and not ingested.errors
    subject = f"test.connector.{unique}"
    command = RequestSourceList(
        prompt="Do marine heatwaves cause mass coral bleaching on the Great Barrier Reef?",
        num_references=3,
        detail_level="citation_summary",
        source_type="academic",
    )
    async with corpus_connector(nc, subject, sessions):
        outcome = await scout_factory(subject).handle(command)
    assert outcome.error is None, outcome.error

    sources = {s.origin_id: s for s in outcome.snapshot.source_list.sources}
    ortega = sources.get(f"corpus:doi:{ORTEGA_DOI}")
    assert ortega is not None, [s.title for s in sources.values()]
    assert (
        ortega.title,
        ortega.authors,
        ortega.publication,
        ortega.date,
        ortega.doi,
        ortega.url,
    ) == (
        "Marine heatwaves and mass coral bleaching on the Great Barrier Reef",
        ORTEGA_AUTHORS,
        "Nature Geoscience",
        date(2019, 1, 1),
        ORTEGA_DOI,
        f"https://doi.org/{ORTEGA_DOI}",
    )

    async with (
        sessions() as session
    ):  # the exports render the stored version, as the gateway's export route does
        stored = await UnitOfWork(session, service="test").reports.version(command.source_list_id)
    stored_sources = {s["origin_id"]: s for s in stored.content["source_list"]["sources"]}
    assert stored_sources[ortega.origin_id] == ortega.model_dump(mode="json")
    report = Report.model_validate(stored.content["report"])

    markdown = export_report(report, "markdown").content.decode()
    assert (
        f"Sofía Ortega; Lars Øberg; Mei Tanaka (2019). Marine heatwaves and mass coral bleaching on the Great Barrier "
        f"Reef. *Nature Geoscience*. doi:{ORTEGA_DOI}" in markdown
    ), markdown

    (entry,) = [
        e
        for e in bibtexparser.parse_string(export_report(report, "bibtex").content.decode()).entries
        if "doi" in e.fields_dict and e.fields_dict["doi"].value == ORTEGA_DOI
    ]
    assert (entry["author"], entry["year"], entry["journal"]) == (
        "Ortega, Sofía and Øberg, Lars and Tanaka, Mei",
        "2019",
        "Nature Geoscience",
    )

    (record,) = [
        r
        for r in rispy.loads(export_report(report, "ris").content.decode())
        if r.get("doi") == ORTEGA_DOI
    ]
    assert (record["authors"], record["year"]) == (
        ["Ortega, Sofía", "Øberg, Lars", "Tanaka, Mei"],
        "2019",
    )
    assert record["journal_name"] == "Nature Geoscience"

    (item,) = [
        i
        for i in json.loads(export_report(report, "csl-json").content)
        if i.get("DOI") == ORTEGA_DOI
    ]
    assert item["author"] == [
        {"given": "Sofía", "family": "Ortega"},
        {"given": "Lars", "family": "Øberg"},
        {"given": "Mei", "family": "Tanaka"},
    ]
    assert (item["issued"], item["container-title"]) == (
        {"date-parts": [[2019]]},
        "Nature Geoscience",
    )
