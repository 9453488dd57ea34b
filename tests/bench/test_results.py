"""The benches' record and the page written from it: a summary line is appended to the results
file with its figures, commit and load; `docs/benchmarks.md` is what `task docs:bench` writes
from `bench/results.jsonl` (a run appended, or the page's table edited by hand, and not
regenerated, fails here), and the same records always give the same page."""

from __future__ import annotations

import ast
import inspect
import json
import random
from pathlib import Path

import pytest

from bench.harness.benchmarks_page import BEGIN, END, PAGE, latest, main, render
from bench.harness.results import REPO, RESULTS, load, parse, print_summary

pytestmark = pytest.mark.unit


def test_a_summary_line_is_parsed_into_its_figures() -> None:
    name, figures = parse(
        "bench:soak tasks=20000 rate=7 worst_rss_growth=7.9% (researcher) ratio=1.079 gap=4.77e-07"
    )
    assert name == "bench:soak"
    assert figures == {
        "tasks": 20000,
        "rate": 7,
        "worst_rss_growth": "7.9%",
        "ratio": 1.079,
        "gap": 4.77e-07,
    }
    assert parse("bench:embed:pairs torch_per_s=8.6")[0] == "bench:embed:pairs"
    with pytest.raises(ValueError, match="not a bench summary line"):
        parse("retrieval: nDCG@10 0.76")


def test_a_run_is_appended_with_its_commit_and_load_and_a_smoke_run_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    monkeypatch.setenv("BENCH_RESULTS", str(results))
    print_summary("bench:demo papers=12 seconds=3.5")
    print_summary("bench:demo papers=1 seconds=0.1", keep=False)
    assert capsys.readouterr().out.splitlines() == [
        "bench:demo papers=12 seconds=3.5",
        "bench:demo papers=1 seconds=0.1",
    ]
    [entry] = load(results)
    assert entry["bench"] == "bench:demo"
    assert entry["figures"] == {"papers": 12, "seconds": 3.5}
    assert len(entry["load"]) == 3 and entry["cpus"] >= 1
    assert entry["commit"] and entry["date"].endswith("Z")


def test_every_record_of_the_results_file_is_a_summary_line_with_its_figures() -> None:
    records = load(RESULTS)
    assert records
    for entry in records:
        assert parse(entry["summary"]) == (entry["bench"], entry["figures"]), entry
        assert entry["date"] and "load" in entry and "commit" in entry


def test_the_page_is_deterministic_and_keeps_each_benchs_last_line(tmp_path: Path) -> None:
    records = load(RESULTS)
    page = PAGE.read_text(encoding="utf-8")
    assert render(page, records) == render(render(page, records), records)
    shuffled = records[:]
    random.Random(0).shuffle(shuffled)
    # only the order within one bench matters: the last record of each bench is the one shown
    assert [e["bench"] for e in latest(shuffled)] == sorted({e["bench"] for e in records})
    later = {**records[0], "summary": records[0]["bench"] + " ratio=9.99", "date": "later"}
    written = render(page, [*records, later])
    assert later["summary"] in written and written.count(BEGIN) == written.count(END) == 1


def test_the_benchmarks_page_is_current_with_the_results_file() -> None:
    assert main(["--check"]) == 0, "docs/benchmarks.md is stale: run `task docs:bench`"


def test_a_stale_page_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({**load(RESULTS)[0], "summary": "bench:x a=1", "bench": "bench:x"}) + "\n"
    )
    page.write_text(f"text\n{BEGIN}\n{END}\nmore\n")
    assert main(["--check", "--page", str(page), "--results", str(results)]) == 1
    assert main(["--page", str(page), "--results", str(results)]) == 0
    assert "`bench:x a=1`" in page.read_text() and page.read_text().endswith("more\n")
    assert main(["--check", "--page", str(page), "--results", str(results)]) == 0


def test_every_bench_calls_print_summary_as_it_is_defined() -> None:
    """A call with an argument `print_summary` does not take fails only at the end of a long run."""
    accepted = set(inspect.signature(print_summary).parameters) - {"line"}
    calls = []
    for path in sorted((REPO / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print_summary":
                calls.append(path.name)
                keywords = {keyword.arg for keyword in node.keywords}
                assert len(node.args) == 1 and keywords <= accepted, (path.name, node.lineno)
    assert len(set(calls)) >= 20
