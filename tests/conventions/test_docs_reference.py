"""The reference pages of docs/ say what is true now: no commit hash, no "issue N" and no day a
thing was measured or changed ("28 Nov") (measured
runs with their commit live in bench/results.jsonl and docs/benchmarks.md, history in
CHANGELOG.md). Links and hex in URLs (a paper's id) are not commits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
MEASUREMENTS = {"benchmarks.md"}
_URL = re.compile(r"https?://\S+")
# 7 to 40 hex characters with at least one letter and one digit: a short or full commit hash
_HASH = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
_ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
# a journal's day: "28 Nov", "3 Dec 2026" (a month written out, "1 January of the year", is prose;
# a quoted example text, "… Karimi since 3 May", is what the engine reads, not when)
_DAY = re.compile(r"\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b")
_QUOTED = re.compile(r'"[^"\n]*"')


def journal_marks(text: str) -> list[str]:
    """The commit hashes, issue numbers and days a page's text holds, URLs left out."""
    text = _URL.sub("", text)
    return _HASH.findall(text) + _ISSUE.findall(text) + _DAY.findall(_QUOTED.sub("", text))


def reference_pages() -> list[Path]:
    return [p for p in sorted((REPO / "docs").glob("*.md")) if p.name not in MEASUREMENTS]


def test_the_reference_pages_hold_no_commit_hash_no_issue_number_and_no_day() -> None:
    pages = reference_pages()
    assert len(pages) >= 10
    found = {
        p.name: marks for p in pages if (marks := journal_marks(p.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_hashes_issue_numbers_and_days_are_found_and_figures_and_examples_are_not() -> None:
    text = (
        "Measured at 9609d63 (issue 30; see Issue #36), 2ceca68e; not 1048576, 2.38e-07, "
        "MRN-00123456, deadbeef-cafe or https://example.org/paper/68fa6c811e209131cea34613; "
        "rerun 28 Nov, quiet, and on 12 May 2026; dates from 1 January 2000 parse; "
        '"seen since 3 May" is an example.'
    )
    assert journal_marks(text) == [
        "9609d63",
        "2ceca68e",
        "issue 30",
        "Issue #36",
        "28 Nov",
        "12 May",
    ]
