"""docs/architecture.md's "Following a review request" stays true of the code: the route to the
saved report in at most 10 stops and 8 files, every file there, and every function or method a
stop names defined in the files of the path (a rename or a move that skips the page fails here)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Following a review request"


def stops() -> list[tuple[str, str]]:
    """(stop cell, file) of each row of the section's table."""
    page = (REPO / "docs" / "architecture.md").read_text()
    section = page[page.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if re.match(r"^\| \d+ \|", line)]
    return [(cells[1], cells[2].strip().strip("`")) for cells in rows]


def defined(files: set[str]) -> set[str]:
    """`name` and `Class.name` for every function and method the files define."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse((REPO / path).read_text())):
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
                names |= {
                    f"{node.name}.{item.name}"
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                }
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return names


def test_a_review_reaches_its_saved_report_in_at_most_ten_stops_in_eight_files() -> None:
    path = stops()
    files = {file for _, file in path}
    assert 1 <= len(path) <= 10 and len(files) <= 8, (len(path), sorted(files))
    assert all((REPO / file).is_file() for file in files), sorted(
        f for f in files if not (REPO / f).is_file()
    )
    named = {name for cell, _ in path for name in re.findall(r"`([\w.]+)`", cell)}
    assert named - defined(files) == set(), (
        "stops the page names that the path's files do not define"
    )
