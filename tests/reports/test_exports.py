"""Exports a reference manager or reader can open: BibTeX and RIS are read back by their own
libraries, CSL-JSON carries structured names and dates, the PDF's text is extractable."""

from __future__ import annotations

import io
import json

import bibtexparser
import pypdf
import pytest
import rispy

from research_reports import (
    Reference,
    export_report,
    split_name,
    to_bibtex,
    to_csl_json,
    to_pdf,
    to_ris,
)
from tests.reports.sample import references, review

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Smith, John", ("Smith", "John")),
        ("Maria Garcia", ("Garcia", "Maria")),
        ("Nakamura H", ("Nakamura", "H")),
        ("Ludwig van Beethoven", ("van Beethoven", "Ludwig")),
        ("WHO", ("WHO", "")),
    ],
)
def test_author_names_split_into_family_and_given(name: str, expected: tuple[str, str]) -> None:
    assert split_name(name) == expected


def test_bibtex_reads_back_with_every_author_and_field() -> None:
    library = bibtexparser.parse_string(to_bibtex(references()))
    assert not library.failed_blocks
    entries = {e.key: e for e in library.entries}
    assert set(entries) == {"smith2019vitamin", "garcia2021vitamin", "nakamura2017calcium"}
    smith = entries["smith2019vitamin"]
    assert smith.entry_type == "article"
    assert smith.fields_dict["author"].value == "Smith, John and Müller, Anna"
    assert smith.fields_dict["doi"].value == "10.1016/S0140-6736(19)0001-1"
    assert smith.fields_dict["year"].value == "2019"
    garcia = entries["garcia2021vitamin"]
    assert (
        garcia.fields_dict["title"].value
        == r"Vitamin D alone \& fracture prevention: a meta-analysis"
    )
    assert garcia.fields_dict["author"].value.split(" and ") == [
        "Garcia, Maria",
        "Wei, Li",
        "Hansen, Ole",
    ]
    assert entries["nakamura2017calcium"].entry_type == "misc"


def test_colliding_bibtex_keys_get_suffixes() -> None:
    refs = [Reference(id=i, title="Vitamin trial", authors=["Smith J"], year=2020) for i in (1, 2)]
    keys = [e.key for e in bibtexparser.parse_string(to_bibtex(refs)).entries]
    assert keys == ["smith2020vitamin", "smith2020vitamina"]


def test_a_sources_own_id_in_its_url_is_no_url_of_any_export() -> None:
    corpus = Reference(id=1, title="A corpus paper", url="corpus:4983", paper_id="corpus:4983")
    bib = bibtexparser.parse_string(to_bibtex([corpus])).entries[0]
    assert "url" not in bib.fields_dict and bib.key == "anonndcorpus"
    assert bib.fields_dict["note"].value == "paper id: corpus:4983"  # still named, as a note
    assert "urls" not in rispy.loads(to_ris([corpus]))[0]
    assert "URL" not in to_csl_json([corpus])[0]


def test_ris_reads_back_with_rispy() -> None:
    records = rispy.loads(to_ris(references()))
    assert [r["type_of_reference"] for r in records] == ["JOUR", "JOUR", "GEN"]
    assert records[0]["authors"] == ["Smith, John", "Müller, Anna"]
    assert records[0]["title"] == "Vitamin D and hip fracture: a randomised trial"
    assert records[0]["doi"] == "10.1016/S0140-6736(19)0001-1"
    assert records[1]["urls"] == ["https://example.org/garcia"] and records[1]["year"] == "2021"
    assert records[2]["notes"] == ["paper id: pmid:28000001"]


def test_csl_json_has_structured_names_dates_and_ids() -> None:
    items = json.loads(export_report(review(), "csl-json").content)
    assert items == to_csl_json(references())
    smith = items[0]
    assert smith["type"] == "article-journal" and smith["issued"] == {"date-parts": [[2019]]}
    assert smith["author"] == [
        {"family": "Smith", "given": "John"},
        {"family": "Müller", "given": "Anna"},
    ]
    assert smith["DOI"] == "10.1016/S0140-6736(19)0001-1" and items[2]["type"] == "document"


def test_pdf_text_has_title_findings_quotes_and_references() -> None:
    reader = pypdf.PdfReader(io.BytesIO(to_pdf(review())))
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    assert "Vitamin D supplementation and fracture risk" in text
    assert "[SUPPORTED]" in text and "7. References" in text
    assert "Calcium plus vitamin D in nursing homes" in text


def test_pdf_survives_text_outside_latin_1() -> None:
    report = review()
    report.sections[0].body += " Cohorts from 東京 and Kraków (≥ 65 years) — see [1]."
    assert to_pdf(report).startswith(b"%PDF")


def test_export_formats_and_unknown_format() -> None:
    report = review()
    assert export_report(report, "markdown").content.decode().startswith("# Vitamin D")
    assert export_report(report, "bibtex").media_type.startswith("application/x-bibtex")
    assert export_report(report, "ris").extension == "ris"
    with pytest.raises(ValueError, match="not a valid ExportFormat"):
        export_report(report, "docx")


def test_pdf_without_a_unicode_font_folds_text_to_latin_1(monkeypatch: pytest.MonkeyPatch) -> None:
    import research_reports.pdf as pdf_module

    monkeypatch.setattr(pdf_module, "_dejavu", lambda: None)  # a machine with no DejaVu installed
    report = review()
    report.sections[0].body += " Cohorts from Kraków (≥ 65 years) — “quoted” — and 東京."
    text = " ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(to_pdf(report))).pages)
    assert "Müller" in text and ">= 65 years" in text and '"quoted"' in text


def test_exports_hold_hostile_metadata_in_its_field_and_round_trip_through_the_importer(
    tmp_path,
) -> None:
    """A source's metadata is anyone's text: a `}` in a DOI or URL must not close the field and
    open a `file = {…}` (a path a reference manager would follow), a line break in an RIS value
    must not start a line of its own; each export reads back as the same references."""
    from research_corpus.errors import MalformedRecordError
    from research_corpus.library import read_library

    refs = [
        Reference(
            id=1,
            title="Vitamin D {and} fractures }, file = {/etc/passwd}\n@misc{evil, title={x}}",
            authors=["Smith, John", "WHO"],
            year=2019,
            venue="The Lancet & Co_ 100%",
            doi="10.1000/abc}, file={/etc/passwd",
            url="https://example.org/a} ,file={/etc/passwd}",
        ),
        Reference(
            id=2,
            title="Calcium intake\nER  - \nTY  - JOUR\nL1  - /etc/passwd\nTI  - injected",
            authors=["Garcia, Maria\nAU  - Mallory"],
            year=2021,
            venue="Bone\r\nL1  - /etc/shadow",
            doi="10.1000/xyz\u2028L1  - /etc/passwd",
            url="https://example.org/b\nUR  - https://evil.example",
        ),
    ]
    exported = {
        "bibtex": ("refs.bib", to_bibtex(refs)),
        "ris": ("refs.ris", to_ris(refs)),
        "csl-json": ("refs.json", json.dumps(to_csl_json(refs))),
    }
    assert (
        "file = {/etc/passwd}" not in exported["bibtex"][1]
        and "\nL1  - /etc" not in exported["ris"][1]
    )
    for fmt, (name, text) in exported.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        read = list(read_library(tmp_path / name, fmt))
        assert not [r for r in read if isinstance(r, MalformedRecordError)], (fmt, read)
        papers = [r for r in read if not isinstance(r, MalformedRecordError)]
        assert len(papers) == 2 and all(r.attachment is None and not r.notes for r in papers), (
            fmt,
            text,
        )
        by_title = {r.title: r for r in papers}
        first, second = (
            by_title[" ".join(ref.title.split())] for ref in refs
        )  # line breaks fold to spaces
        assert first.authors == ["John Smith", "WHO"] and second.authors == [
            "Maria AU - Mallory Garcia"
        ], fmt
        assert (first.year, first.venue, second.year, second.venue) == (
            2019,
            "The Lancet & Co_ 100%",
            2021,
            "Bone L1 - /etc/shadow",
        ), fmt
        assert first.doi == refs[0].doi and second.doi is not None, (
            fmt
        )  # BibTeX's percent-encoding reads back
