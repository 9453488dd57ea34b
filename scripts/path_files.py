"""Which of the repository's files and functions a request ran through, per process.

Measured with the tracer in `scripts/trace_calls` (see its docstring): a function counts for the
request when it was entered between the request's start and end and not in an idle window of
the same stack just before (ticks, heartbeats and metrics readers run in both).

    RE_TRACE_DIR=/tmp/trace PYTHONPATH=scripts/trace_calls research-engine up --data-dir D &
    date +%s.%N > idle0; sleep 40; date +%s.%N > t0
    research-engine review "…" --data-dir D --watch; date +%s.%N > t1
    python scripts/path_files.py /tmp/trace idle0 t0 t1 [--list]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def buckets(path: str) -> int:
    return int(float(Path(path).read_text()) * 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace_dir", type=Path)
    parser.add_argument("idle_start")
    parser.add_argument("start")
    parser.add_argument("end")
    parser.add_argument("--list", action="store_true", help="list each process's files")
    args = parser.parse_args()
    idle = range(buckets(args.idle_start), buckets(args.start))
    request = range(buckets(args.start), buckets(args.end) + 1)
    root = str(Path(__file__).resolve().parents[1]) + "/"
    every: set[str] = set()
    for trace in sorted(args.trace_dir.glob("*.json")):
        data = json.loads(trace.read_text())
        calls: dict[str, list[int]] = data["calls"]
        path = {
            key
            for key, seen in calls.items()
            if any(b in request for b in seen) and not any(b in idle for b in seen)
        }
        if not path:
            continue
        files = sorted({key.split("::")[0].removeprefix(root) for key in path})
        every.update(files)
        print(f"{data['argv'][0].removeprefix(root)}: {len(files)} files, {len(path)} functions")
        if args.list:
            for file in files:
                print(f"    {file}")
    print(f"all processes: {len(every)} files")


if __name__ == "__main__":
    main()
