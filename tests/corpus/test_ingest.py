"""Integration: ingesting into real Postgres + pgvector with the real MiniLM model."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from research_corpus.ingest import ingest_path
from tests.corpus.conftest import SMALL_CORPUS, write_jsonl
from tests.corpus.pdf_builder import write_pdf

pytestmark = pytest.mark.integration


async def _snapshot(sessions) -> list[tuple]:
    async with sessions() as session:
        rows = await session.execute(
            text(
                """SELECT p.external_id, p.content_hash, c.id, c.chunk_index, c.token_count,
                          vector_dims(c.embedding),
                          (SELECT count(*) FROM corpus_postings ps WHERE ps.chunk_id = c.id) > 0
                   FROM corpus_papers p JOIN corpus_chunks c ON c.paper_id = p.id ORDER BY c.id"""
            )
        )
        return [tuple(r) for r in rows]


async def test_reingesting_the_same_file_changes_nothing(empty_corpus, small_corpus):
    first = await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    assert (first.added, first.updated, first.unchanged, first.errors) == (6, 0, 0, [])
    before = await _snapshot(empty_corpus)
    assert len(before) == 6 and all(
        dims == 384 and has_postings for *_, dims, has_postings in before
    )
    assert all(tokens > 5 for _, _, _, _, tokens, _, _ in before)

    again = await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    assert (again.added, again.updated, again.unchanged, again.chunks) == (0, 0, 6, 0)
    assert await _snapshot(empty_corpus) == before  # same rows, same chunk ids: nothing rewritten


async def test_ingest_is_incremental_new_and_changed_papers_only(
    empty_corpus, tmp_path, small_corpus
):
    await ingest_path(empty_corpus, small_corpus, fmt="jsonl", progress=False)
    before = {row[0]: row for row in await _snapshot(empty_corpus)}
    changed = [dict(r) for r in SMALL_CORPUS]
    changed[2]["abstract"] = (
        "Vitamin D supplementation reduced falls but not fractures in a new trial."
    )
    changed.append(
        {
            "id": "new-paper",
            "title": "Metformin and longevity",
            "abstract": "Metformin use and survival.",
            "year": 2022,
            "venue": "BMJ",
        }
    )
    report = await ingest_path(
        empty_corpus, write_jsonl(tmp_path / "v2.jsonl", changed), fmt="jsonl", progress=False
    )
    assert (report.added, report.updated, report.unchanged) == (1, 1, 5)
    after = {row[0]: row for row in await _snapshot(empty_corpus)}
    assert set(after) == set(before) | {"new-paper"}
    assert after["statin-ldl"] == before["statin-ldl"]  # untouched
    assert (
        after["vitd-fracture"][1] != before["vitd-fracture"][1]
    )  # re-indexed with its new content
    async with empty_corpus() as session:
        abstract = await session.scalar(
            text("SELECT abstract FROM corpus_papers WHERE external_id = 'vitd-fracture'")
        )
        df = await session.scalar(
            text("SELECT doc_freq FROM corpus_lexemes WHERE lexeme = 'metformin'")
        )
    assert "falls" in abstract and df == 1


async def test_malformed_lines_are_reported_with_line_numbers_and_valid_lines_kept(
    empty_corpus, tmp_path
):
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"doc_id": 1, "title": "Good one", "abstract": ["Fine sentence."]},
            '{"doc_id": 2, "title": "broken',
            {"doc_id": 3, "title": "Good two", "abstract": ["Another fine sentence."]},
            {"title": "no id", "abstract": ["x"]},
            {"doc_id": 1, "title": "Duplicate", "abstract": ["dup"]},
        ],
    )
    report = await ingest_path(empty_corpus, path, fmt="scifact", progress=False)
    assert report.added == 2
    assert [(e.line, e.reason.split(" ")[0]) for e in report.errors] == [
        (2, "invalid"),
        (4, "missing"),
        (5, "duplicate"),
    ]
    async with empty_corpus() as session:
        ids = (
            (
                await session.execute(
                    text("SELECT external_id FROM corpus_papers ORDER BY external_id")
                )
            )
            .scalars()
            .all()
        )
    assert ids == ["1", "3"]


async def test_scifact_lines_keep_their_doc_id_and_sentences(empty_corpus, shared_dir, tmp_path):
    lines = (shared_dir / "data/scifact/corpus.jsonl").read_text().splitlines()[:5]
    path = tmp_path / "five.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = await ingest_path(empty_corpus, path, fmt="scifact", progress=False)
    assert report.added == 5 and not report.errors
    first = json.loads(lines[0])
    async with empty_corpus() as session:
        row = (
            await session.execute(
                text("SELECT title, abstract FROM corpus_papers WHERE external_id = :id"),
                {"id": str(first["doc_id"])},
            )
        ).one()
    assert row.title == first["title"] and row.abstract == " ".join(first["abstract"])


async def test_pdf_folder_is_split_into_sections(empty_corpus, tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_pdf(
        folder / "trial.pdf",
        [
            "Zinc lozenges and the common cold",
            "Abstract",
            "Zinc lozenges shortened colds in adults.",
            "Methods",
            "We randomised 200 adults to zinc or placebo lozenges.",
            "Results",
            "Colds lasted two days less with zinc.",
            "References",
            "1. Someone et al. 2001.",
        ],
    )
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    report = await ingest_path(empty_corpus, folder, fmt="pdf-dir", progress=False)
    assert report.added == 1 and len(report.errors) == 1 and "broken.pdf" in report.errors[0].reason
    async with empty_corpus() as session:
        rows = (
            await session.execute(
                text("SELECT section, locator, text FROM corpus_chunks ORDER BY chunk_index")
            )
        ).all()
    assert [r.section for r in rows] == ["abstract", "methods", "results"]
    assert rows[1].locator == "section:methods" and "randomised 200 adults" in rows[1].text
    assert not any("Someone et al" in r.text for r in rows)  # references are dropped
