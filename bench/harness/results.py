"""Where every benchmark's figures go: `print_summary(line)` prints a bench's closing `bench:<name> k=v …`
line and appends it to `bench/results.jsonl`, one JSON object per run, with the figures parsed,
the time, the commit and the machine's load; `docs/benchmarks.md` is written from that file
(`task docs:bench`, `bench.harness.benchmarks_page`).

`BENCH_RESULTS` names another file to append to (the tests that run a bench point it at a
temporary folder, so a test run never adds to the committed record)."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results.jsonl"

_NAME = re.compile(r"^(bench:[\w:.-]+)(?:\s|$)")
_FIGURE = re.compile(r"(?<!\S)([\w.@-]+)=(\S+)")


def results_path() -> Path:
    """The file runs are appended to: `BENCH_RESULTS` when set, else `bench/results.jsonl`."""
    named = os.environ.get("BENCH_RESULTS")
    return Path(named) if named else RESULTS


def figure(text: str) -> int | float | str:
    """A figure's value as a number when it reads as one (`5183` → int, `0.40` → float), else the
    text as written (`7.9%`, `1,2`, `onnx`)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse(line: str) -> tuple[str, dict[str, int | float | str]]:
    """The bench's name (`bench:pipeline`) and its `key=value` figures, in the line's order."""
    found = _NAME.match(line)
    if not found:
        raise ValueError(f"not a bench summary line (it starts with 'bench:<name> '): {line!r}")
    return found[1], {key: figure(value) for key, value in _FIGURE.findall(line)}


def commit() -> str | None:
    """The checkout's short commit, with `+dirty` when tracked files differ from it; None outside a
    git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def record(line: str) -> dict[str, Any]:
    """One run's record: the line, its figures, the UTC time, the commit, the load average over
    1 / 5 / 15 minutes and the CPU count of the machine it ran on."""
    name, figures = parse(line)
    return {
        "bench": name,
        "summary": line,
        "figures": figures,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit(),
        "load": [round(value, 2) for value in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


def print_summary(line: str, *, keep: bool = True) -> dict[str, Any] | None:
    """Print a bench's summary line and, unless `keep` is False (a smoke run, not the
    benchmark), append its record to the results file; returns the record appended."""
    print(line, flush=True)
    if not keep:
        return None
    entry = record(line)
    path = results_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return entry


def load(path: Path | None = None) -> list[dict[str, Any]]:
    """Every record of the results file, in the order they were appended."""
    text = (path or results_path()).read_text(encoding="utf-8")
    return [json.loads(row) for row in text.splitlines() if row.strip()]
