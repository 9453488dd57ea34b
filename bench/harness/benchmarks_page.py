"""Write the measured part of `docs/benchmarks.md` from `bench/results.jsonl` (`task docs:bench`):
between the page's two marks, one table row per bench with its last summary line, the date, the
commit and the machine's load it ran at. The text outside the marks is written by hand (how each
bench measures, what its figures mean) and kept as it is. The same results give the same page;
`--check` exits 1 when the page is not what the results give."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bench.harness.results import REPO, RESULTS, load

PAGE = REPO / "docs" / "benchmarks.md"
BEGIN = (
    "<!-- bench results: written by `task docs:bench` from bench/results.jsonl; "
    "edit the text outside these marks -->"
)
END = "<!-- end of bench results -->"


def latest(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each bench's last record in the file's order, sorted by the bench's name."""
    last: dict[str, dict[str, Any]] = {}
    for entry in records:
        last[entry["bench"]] = entry
    return [last[name] for name in sorted(last)]


def _load_text(entry: dict[str, Any]) -> str:
    """The load average as recorded: `1.52 / 1.1 / 0.9 on 2 CPUs`; a seed's as noted then."""
    value = entry.get("load")
    cpus = f" on {entry['cpus']} CPUs" if entry.get("cpus") else ""
    if value is None:
        return "not noted" + cpus
    if isinstance(value, list):
        return " / ".join(f"{v:g}" for v in value) + cpus
    return f"{value}{cpus}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def section(records: list[dict[str, Any]]) -> str:
    """The generated text between the marks (the marks included)."""
    rows = [
        BEGIN,
        "",
        "| bench | last summary line | date | commit | load (1 / 5 / 15 min) | run |",
        "|---|---|---|---|---|---|",
    ]
    for entry in latest(records):
        rows.append(
            "| "
            + " | ".join(
                [
                    f"`{entry['bench']}`",
                    f"`{_cell(entry['summary'])}`",
                    entry["date"],
                    entry.get("commit") or "not recorded",
                    _cell(_load_text(entry)),
                    _cell(entry.get("note", "")),
                ]
            )
            + " |"
        )
    rows += ["", END]
    return "\n".join(rows)


def render(page: str, records: list[dict[str, Any]]) -> str:
    """The page with the text between its marks replaced by what `records` give."""
    start, stop = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + section(records) + page[stop:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    current = args.page.read_text(encoding="utf-8")
    written = render(current, load(args.results))
    if args.check:
        if written != current:
            print(f"{args.page} is stale: run `task docs:bench`", file=sys.stderr)
            return 1
        return 0
    if written != current:
        args.page.write_text(written, encoding="utf-8")
        print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
