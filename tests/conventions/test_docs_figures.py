"""The README's measured figures are the ones docs/benchmarks.md gives: every decimal figure of the
README's figures paragraph is, at the README's precision, a figure of the benchmarks page (a figure
changed on one page and not the other, or a superseded one left in the README, fails here)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)")


def decimals(text: str) -> set[str]:
    return set(_DECIMAL.findall(text))


def readme_figures() -> str:
    """The README's paragraph of measured figures: from the link to the benchmarks summary to the
    next heading."""
    readme = (REPO / "README.md").read_text()
    start = readme.index("[benchmarks](docs/benchmarks.md#summary)")
    return readme[readme.rindex("\n\n", 0, start) : readme.index("\n## ", start)]


def missing(figures: set[str], page: str) -> list[str]:
    """The figures no decimal of the page rounds to (half up) at the figure's own precision."""
    found = [Decimal(d) for d in decimals(page)]
    absent = []
    for figure in sorted(figures):
        places = Decimal(1).scaleb(-len(figure.split(".")[1]))
        if not any(d.quantize(places, rounding=ROUND_HALF_UP) == Decimal(figure) for d in found):
            absent.append(figure)
    return absent


def test_the_readme_figures_are_the_benchmarks_page_figures() -> None:
    figures = decimals(readme_figures())
    assert len(figures) >= 10, "the README's figures paragraph was not found or lost its figures"
    assert missing(figures, (REPO / "docs" / "benchmarks.md").read_text()) == []


def test_a_figure_the_page_does_not_give_is_reported() -> None:
    page = "p95 23.6 ms; gold 0.8081; F1 0.405; v1.2.3 is no figure"
    assert missing({"23.6", "0.81", "0.405", "47.4", "0.80"}, page) == ["0.80", "47.4"]
    assert decimals("nDCG@10 0.7655, v1.2.3, 5.1 s.") == {"0.7655", "5.1"}
