"""Unit: reading Zotero / Mendeley exports (BibTeX, RIS, CSL-JSON) into corpus papers."""

from __future__ import annotations

from pathlib import Path

import pytest

from research_corpus.errors import MalformedRecordError
from research_corpus.formats import detect_format
from research_corpus.library import _bibtex_pdf, display_name, normalize_doi, read_library
from research_corpus.records import PaperRecord
from tests.corpus.library_fixture import (
    ASPIRIN_DOI,
    ASPIRIN_PDF_PHRASE,
    CRISPR_DOI,
    VITAMIN_D_DOI,
    VITAMIN_D_PDF_PHRASE,
    lay_out_library,
)

pytestmark = pytest.mark.unit


def _read(
    folder: Path, name: str, fmt: str
) -> tuple[dict[str, PaperRecord], list[MalformedRecordError]]:
    papers, errors = {}, []
    for item in read_library(folder / name, fmt):
        if isinstance(item, MalformedRecordError):
            errors.append(item)
        else:
            papers[item.external_id] = item
    return papers, errors


def test_zotero_bibtex_decodes_latex_splits_authors_and_reads_the_attached_pdf(tmp_path):
    papers, errors = _read(lay_out_library(tmp_path), "zotero.bib", "bibtex")
    aspirin = papers[f"doi:{ASPIRIN_DOI}"]
    assert (
        aspirin.title
        == "Low-dose aspirin and myocardial infarction in older adults: a randomized ASPREE sub-study"
    )
    assert aspirin.authors == ["Ana Ruiz", "Bo Chen", "Jürgen Müller"]
    assert (aspirin.year, aspirin.venue, aspirin.doi) == (2018, "The Lancet", ASPIRIN_DOI)
    assert aspirin.keywords == ["aspirin", "cardiology", "Prevention"]
    assert "by 18% in adults over 70" in aspirin.abstract
    # The PDF's methods follow the record's abstract; its references are not text of the paper.
    assert aspirin.attachment and aspirin.attachment.endswith("Low-dose aspirin.pdf")
    assert ASPIRIN_PDF_PHRASE in aspirin.abstract and "unrelated reference" not in aspirin.abstract
    assert [s.name for s in aspirin.sections][:2] == ["abstract", "methods"]

    vitamin_d = papers[
        f"doi:{VITAMIN_D_DOI}"
    ]  # absolute path into a Zotero storage that is not here
    assert vitamin_d.attachment is None and vitamin_d.notes == [
        "attached PDF not found: /home/researcher/Zotero/storage/Q7RT2PLM/Ng et al. - 2020 - Vitamin D.pdf"
    ]
    assert vitamin_d.authors == ["Dora Ng", "Siobhán O'Connor", "World Health Organization"]
    assert "hip fractures over five years & falls" in vitamin_d.abstract

    park = papers["key:park_exercise_2009"]  # no DOI, no abstract, no PDF: metadata only
    assert park.metadata_only and park.title.endswith("the HF-ACTION protocol")
    assert park.authors == ["Eve Park", "María José de la Cruz"]
    assert park.venue == "Proceedings of the American Heart Association Scientific Sessions"

    crispr = papers[f"doi:{CRISPR_DOI}"]  # a DOI given as a URL, in upper case
    assert crispr.title == "CRISPR interference represses transcription in Escherichia coli"
    assert crispr.authors == ["Finn Olsen", "Åsa Åberg"] and crispr.keywords == [
        "CRISPRi",
        "gene regulation",
    ]
    assert crispr.aliases == ["key:olsen_crispr_2013"]

    assert [(e.line, e.reason.split(" (")[0]) for e in errors] == [
        (42, "no title"),
        (48, "unreadable BibTeX entry"),
    ]
    assert len(papers) == 4


def test_mendeley_ris_keeps_reading_past_a_record_without_end_tag(tmp_path):
    papers, errors = _read(lay_out_library(tmp_path), "mendeley.ris", "ris")
    vitamin_d = papers[f"doi:{VITAMIN_D_DOI}"]
    assert vitamin_d.authors == ["Dora Ng", "Siobhán O'Connor", "Ken-ichi Nakamura"]
    assert (vitamin_d.year, vitamin_d.venue) == (2020, "JAMA")
    assert vitamin_d.keywords == ["vitamin D", "fractures", "older adults"]
    assert VITAMIN_D_PDF_PHRASE in vitamin_d.abstract and vitamin_d.aliases == ["key:Ng2020"]
    assert papers["key:Park2009"].metadata_only and papers["key:Park2009"].year == 2009
    crispr = papers[f"doi:{CRISPR_DOI}"]
    assert crispr.notes == [
        "attached PDF not found: /home/researcher/Documents/Mendeley Desktop/Olsen 2013 CRISPR.pdf"
    ]
    assert crispr.year == 2013 and crispr.aliases[0].startswith(
        "key:olsen2013-"
    )  # no ID: a key from author, year, title
    assert [(e.line, e.reason) for e in errors] == [
        (31, "no title"),
        (37, "record has no `ER` end tag"),
    ]


def test_zotero_csl_json_reads_name_parts_and_dates_and_points_at_bad_items(tmp_path):
    papers, errors = _read(lay_out_library(tmp_path), "zotero.json", "csl-json")
    assert papers[f"doi:{ASPIRIN_DOI}"].year == 2018
    assert papers[f"doi:{ASPIRIN_DOI}"].keywords == ["aspirin", "cardiology", "Prevention"]
    park = papers["key:http://zotero.org/users/8412/items/7HQ2MZ4R"]
    assert (
        park.authors == ["Eve Park", "María José de la Cruz", "HF-ACTION Investigators"]
        and park.metadata_only
    )
    assert papers[f"doi:{CRISPR_DOI}"].year == 2013  # {"raw": "2013-02-28"}
    assert [(e.line, e.reason) for e in errors] == [
        (37, "no title"),
        (43, "`author` must be a list"),
    ]


def test_a_truncated_csl_json_file_keeps_the_items_before_the_damage(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(
        '[\n  {"id": "a", "title": "First paper"},\n  {"id": "b", "title": "Sec', encoding="utf-8"
    )
    items = list(read_library(path, "csl-json"))
    assert isinstance(items[0], PaperRecord) and items[0].external_id == "key:a"
    assert (
        isinstance(items[1], MalformedRecordError)
        and items[1].line == 3
        and "rest of the file" in items[1].reason
    )


def test_a_csl_json_item_nested_too_deeply_is_skipped_with_its_reason_and_the_rest_is_read(
    tmp_path,
):
    deep = (
        "[" * 100_000 + '"a ] } \\" [ string"' + "]" * 100_000
    )  # brackets in a string do not count
    path = tmp_path / "deep.json"
    path.write_text(
        '[\n  {"id": "a", "title": "First paper"},\n  {"id": "b", "title": ' + deep + "},\n"
        '  {"id": "c", "title": "Third paper"}\n]',
        encoding="utf-8",
    )
    items = list(read_library(path, "csl-json"))
    assert [i.external_id for i in items if isinstance(i, PaperRecord)] == ["key:a", "key:c"]
    (skipped,) = [i for i in items if isinstance(i, MalformedRecordError)]
    assert skipped.line == 3 and "nested too deeply" in skipped.reason
    lone = tmp_path / "lone.json"
    lone.write_text('{"id": "d", "title": ' + deep + "}", encoding="utf-8")
    assert [
        (type(i).__name__, getattr(i, "reason", "")) for i in read_library(lone, "csl-json")
    ] == [("MalformedRecordError", "a CSL-JSON item nested too deeply to read (skipped)")]


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csl-json"])
def test_an_export_over_the_size_cap_is_one_clear_error_and_is_not_read(tmp_path, monkeypatch, fmt):
    from research_corpus import library

    monkeypatch.setattr(library, "MAX_LIBRARY_BYTES", 4096)
    text = {
        "bibtex": "@article{k, title={A paper}}\n",
        "ris": "TY  - JOUR\nTI  - A paper\nER  - \n",
        "csl-json": '[{"id": "k", "title": "A paper"}]',
    }[fmt]
    fits = tmp_path / "fits"
    fits.write_text(text, encoding="utf-8")
    assert [type(i).__name__ for i in read_library(fits, fmt)] == ["PaperRecord"]
    big = tmp_path / "big"
    big.write_text(text + " " * 4096, encoding="utf-8")
    (error,) = read_library(big, fmt)
    assert isinstance(error, MalformedRecordError) and error.line == 0
    assert "big is larger than" in error.reason and "split it" in error.reason


@pytest.mark.parametrize(
    ("field", "path"),
    [
        (
            "Full Text PDF:files/12/a b.pdf:application/pdf;Snapshot:files/13/x.html:text/html",
            "files/12/a b.pdf",
        ),
        (
            "Snapshot:files/13/x.html:text/html;Full Text PDF:/abs/paper.pdf:application/pdf",
            "/abs/paper.pdf",
        ),
        (r":C\:/Users/ana/Mendeley/paper.pdf:pdf", "C:/Users/ana/Mendeley/paper.pdf"),
        ("/home/ana/papers/better-bibtex.pdf", "/home/ana/papers/better-bibtex.pdf"),
        ("Snapshot:files/13/x.html:text/html", None),
    ],
)
def test_bibtex_file_field_of_each_reference_manager(field, path):
    assert _bibtex_pdf(field) == path


def test_names_dois_and_format_detection(tmp_path):
    assert display_name("van der Berg, Jan") == "Jan van der Berg"
    assert display_name("King, Jr, Martin Luther") == "Martin Luther King Jr"
    assert display_name("Ana Ruiz") == "Ana Ruiz"
    assert normalize_doi("https://doi.org/10.1000/ABC") == "10.1000/abc"
    assert normalize_doi("doi: 10.1000/x") == "10.1000/x" and normalize_doi("not a doi") is None
    lay_out_library(tmp_path)
    (tmp_path / "export.txt").write_text("TY  - JOUR\nTI  - x\nER  - \n", encoding="utf-8")
    (tmp_path / "My Library.json").write_text('[{"id": "a", "title": "x"}]', encoding="utf-8")
    assert [
        detect_format(tmp_path / n)
        for n in ("zotero.bib", "mendeley.ris", "export.txt", "My Library.json")
    ] == ["bibtex", "ris", "ris", "csl-json"]
