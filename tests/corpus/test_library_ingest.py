"""Integration: a researcher's Zotero / Mendeley exports ingested end to end (real Postgres +
pgvector, the real MiniLM model): ingest -> stored metadata -> search finds the paper, attached
PDFs included; re-ingest updates by DOI or record key and never duplicates."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sqlalchemy import text

from research_corpus.ingest import ingest_path
from research_corpus.search import SearchMode, search
from tests.corpus.library_fixture import (
    ASPIRIN_DOI,
    ASPIRIN_PDF_PHRASE,
    CRISPR_DOI,
    VITAMIN_D_DOI,
    VITAMIN_D_PDF_PHRASE,
    lay_out_library,
)

pytestmark = pytest.mark.integration


async def _papers(sessions) -> dict[str, tuple]:
    async with sessions() as session:
        rows = await session.execute(
            text(
                "SELECT external_id, title, authors, year, venue, doi, keywords FROM corpus_papers"
            )
        )
        return {r.external_id: tuple(r)[1:] for r in rows}


async def _top(sessions, query: str, mode: SearchMode = "hybrid") -> list[str]:
    async with sessions() as session:
        return [h.external_id for h in await search(session, query, k=3, mode=mode)]


@pytest.mark.parametrize(
    ("name", "fmt", "papers"),
    [("zotero.bib", "bibtex", 4), ("mendeley.ris", "ris", 3), ("zotero.json", "csl-json", 3)],
)
async def test_each_export_format_is_searchable_with_its_metadata(
    empty_corpus, tmp_path, name, fmt, papers
):
    folder = lay_out_library(tmp_path)
    report = await ingest_path(empty_corpus, folder / name, fmt="auto", progress=False)
    assert report.format == fmt
    assert (report.added, report.metadata_only) == (
        papers,
        1,
    )  # Park 2009 has neither abstract nor PDF
    assert len(report.errors) == 2 and all(e.line > 0 and e.reason for e in report.errors)
    stored = await _papers(empty_corpus)
    title, authors, year, venue, doi, _ = stored[f"doi:{CRISPR_DOI}"]
    assert (title, authors, year, venue, doi) == (
        "CRISPR interference represses transcription in Escherichia coli",
        ["Finn Olsen", "Åsa Åberg"],
        2013,
        "Cell",
        CRISPR_DOI,
    )

    assert (await _top(empty_corpus, "dead Cas9 guide RNA gene repression in bacteria"))[
        0
    ] == f"doi:{CRISPR_DOI}"
    park = next(pid for pid in stored if "2009" in pid or "7HQ2MZ4R" in pid)
    assert (await _top(empty_corpus, "HF-ACTION exercise training heart failure", mode="lexical"))[
        0
    ] == park  # by its title


async def test_an_attached_pdf_is_ingested_and_a_missing_one_is_reported(empty_corpus, tmp_path):
    folder = lay_out_library(tmp_path)
    report = await ingest_path(empty_corpus, folder / "zotero.bib", fmt="bibtex", progress=False)
    assert report.attachments == 1
    assert [(n.line, n.reason) for n in report.notes] == [
        (
            22,
            "attached PDF not found: /home/researcher/Zotero/storage/Q7RT2PLM/Ng et al. - 2020 - Vitamin D.pdf",
        ),
    ]
    assert (await _top(empty_corpus, "light transmission aggregometry platelet aggregation"))[
        0
    ] == f"doi:{ASPIRIN_DOI}"
    async with empty_corpus() as session:
        sections = (
            (
                await session.execute(
                    text(
                        "SELECT c.section FROM corpus_chunks c JOIN corpus_papers p ON p.id = c.paper_id "
                        "WHERE p.external_id = :id ORDER BY c.chunk_index"
                    ),
                    {"id": f"doi:{ASPIRIN_DOI}"},
                )
            )
            .scalars()
            .all()
        )
        abstract = await session.scalar(
            text("SELECT abstract FROM corpus_papers WHERE doi = :doi"), {"doi": ASPIRIN_DOI}
        )
    assert sections == ["abstract", "methods", "results"] and ASPIRIN_PDF_PHRASE in abstract


async def test_reingest_updates_by_doi_or_record_key_and_never_duplicates(empty_corpus, tmp_path):
    folder = lay_out_library(tmp_path)
    first = await ingest_path(empty_corpus, folder / "zotero.bib", fmt="bibtex", progress=False)
    assert first.added == 4
    again = await ingest_path(empty_corpus, folder / "zotero.bib", fmt="bibtex", progress=False)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 4)

    # A record without DOI that gains one in a later export keeps its paper (by its record key).
    bib = (folder / "zotero.bib").read_text(encoding="utf-8")
    (folder / "later.bib").write_text(
        bib.replace(
            "\tpublisher = {AHA},", "\tpublisher = {AHA},\n\tdoi = {10.1161/circ.2009.42},"
        ),
        encoding="utf-8",
    )
    later = await ingest_path(empty_corpus, folder / "later.bib", fmt="bibtex", progress=False)
    assert (later.added, later.updated) == (0, 1)
    papers = await _papers(empty_corpus)
    assert len(papers) == 4 and papers["key:park_exercise_2009"][4] == "10.1161/circ.2009.42"

    # The same papers from Mendeley's RIS (other keys, the Vitamin D PDF present there): matched by
    # DOI, so they are updated (Vitamin D with the PDF's text), not added a second time. Park 2009
    # has no DOI and another key there ("Park2009"): to the corpus it is another record.
    ris = await ingest_path(empty_corpus, folder / "mendeley.ris", fmt="ris", progress=False)
    assert (ris.added, ris.updated) == (1, 2)
    assert (await _top(empty_corpus, "calcidiol liquid chromatography tandem mass spectrometry"))[
        0
    ] == f"doi:{VITAMIN_D_DOI}"
    async with empty_corpus() as session:
        abstract = await session.scalar(
            text("SELECT abstract FROM corpus_papers WHERE doi = :doi"), {"doi": VITAMIN_D_DOI}
        )
    assert VITAMIN_D_PDF_PHRASE in abstract
    papers = await _papers(empty_corpus)
    assert len(papers) == 5 and [doi for *_, doi, _ in papers.values()].count(CRISPR_DOI) == 1


async def test_cli_ingest_says_metadata_only_and_missing_attachments(
    empty_corpus, corpus_database_url, tmp_path
):
    folder = lay_out_library(tmp_path)
    env = {
        **os.environ,
        "DATABASE_URL": corpus_database_url,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    result = subprocess.run(  # noqa: ASYNC221 - the CLI under test needs nothing from this loop
        [
            sys.executable,
            "-m",
            "research_engine.cli",
            "corpus",
            "ingest",
            str(folder / "mendeley.ris"),
            "--no-progress",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 1, result.stderr  # two malformed records
    assert "ris " in result.stdout and "3 added" in result.stdout
    assert "1 with attached PDF, 1 metadata-only (no abstract or PDF)" in result.stdout
    assert "line 37: record has no `ER` end tag" in result.stderr
    assert (
        "line 42: attached PDF not found: /home/researcher/Documents/Mendeley Desktop/Olsen 2013 CRISPR.pdf"
        in result.stderr
    )
