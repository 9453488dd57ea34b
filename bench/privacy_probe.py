"""Recall of the privacy guard per identifier class on the synthetic probe set, then every route.

    .venv/bin/python bench/privacy_probe.py [--size 240] [--seed 16] [--show 5] [--no-routes]

Two outbound paths, both in-process (tests/privacy/test_capture.py repeats them over HTTP):
- query: `outbound_query` of the question (what a connector receives);
- prompt: the question and patient context as the researcher sends them to a remote model
  (`outbound_text`: placeholders for identifiers and for any token outside the vocabulary);
- free_text: the pattern + allow-list de-identifier alone (`deidentify`, used for evidence).
A value counts as caught when neither it nor any of its tokens of 3+ characters appears in
the outbound text. Prints `bench:privacy recall_<path>_<class>=…` lines and a table.

Then (unless `--no-routes`) every route of a running stack (embedded NATS + Postgres, the services
as processes, every outside source and the remote model pointed at a local recording server):
three invented patients through a task with `patient_ref`, a review, a watched verification and a
source list (`bench/harness/privacy_routes.py`); the identifiers found in the recorded requests,
in any table and in any message any stream keeps are counted. Last line:
`privacy routes=… completed=… leaked=… stored=… on_bus=…` (the promise: leaked=0 stored=0 on_bus=0).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from research_privacy import Deidentified, deidentify, delimit, outbound_query, outbound_text
from research_privacy.probes import CLASSES, leaked_tokens, probe_set

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary


def outbound(probe) -> dict[str, str]:
    table = Deidentified(text="")
    prompt = outbound_text(delimit(probe.question), into=table).text + "\n"
    prompt += outbound_text(delimit(probe.patient_ref), into=table).text
    # `free_text` is the pattern + allow-list de-identifier alone (what evidence passages get).
    loose = Deidentified(text="")
    free_text = (
        deidentify(probe.question, into=loose).text
        + "\n"
        + deidentify(probe.patient_ref, into=loose).text
    )
    return {"query": outbound_query(probe.question), "prompt": prompt, "free_text": free_text}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=240)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--show", type=int, default=5, help="print this many leaks per path")
    parser.add_argument(
        "--no-routes", action="store_true", help="only the in-process recall, no stack"
    )
    args = parser.parse_args()
    probes = probe_set(seed=args.seed, size=args.size)
    caught = {(path, c): 0 for path in ("query", "prompt", "free_text") for c in CLASSES}
    shown = {"query": 0, "prompt": 0, "free_text": 0}
    started = time.perf_counter()
    for probe in probes:
        texts = outbound(probe)
        for path, text in texts.items():
            for cls in CLASSES:
                leaks = leaked_tokens(probe.values[cls], text)
                if not leaks:
                    caught[(path, cls)] += 1
                elif shown[path] < args.show:
                    shown[path] += 1
                    print(
                        f"leak {path} {cls} {probe.locale}: {leaks} <- {probe.values[cls]!r}\n    {text[:300]!r}"
                    )
    elapsed = time.perf_counter() - started
    print(f"{'path':8}" + "".join(f"{c:>9}" for c in CLASSES))
    for path in ("query", "prompt", "free_text"):
        print(f"{path:8}" + "".join(f"{caught[(path, c)] / len(probes):9.3f}" for c in CLASSES))
    for (path, cls), n in caught.items():
        print(f"bench:privacy recall_{path}_{cls}={n / len(probes):.3f}")
    print_summary(
        f"bench:privacy probes={len(probes)} seconds_per_probe={elapsed / len(probes):.4f}"
    )
    if not args.no_routes:
        every_route()


class _Folders:
    """What `running_stack` asks of pytest's tmp_path_factory: a fresh folder per name."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def mktemp(self, basename: str, numbered: bool = True) -> Path:
        path = Path(tempfile.mkdtemp(prefix=basename, dir=self.root))
        return path


def every_route() -> None:
    import httpx

    from bench.harness.privacy_routes import (
        ROUTES,
        Recorder,
        bus_leaks,
        recording_server,
        request_leaks,
        stack_env,
        stored_leaks,
        submit_every_route,
        wait_every_route,
    )
    from bench.harness.servers import start_servers
    from bench.harness.stack import running_stack
    from research_platform.db import create_engine, session_factory
    from research_platform.migrate import upgrade

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="privacy-") as tmp, start_servers(Path(tmp)) as servers:
        upgrade(servers.database_url)
        with (
            recording_server() as url,
            running_stack(servers, _Folders(tmp), extra_env=stack_env(url)) as stack,
        ):
            Recorder.received.clear()
            with httpx.Client(
                base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
            ) as client:
                accepted = submit_every_route(client)
                refused = {r: a.status_code for r, a in accepted.items() if a.status_code != 202}
                finished = wait_every_route(
                    client, {r: a for r, a in accepted.items() if r not in refused}
                )

            async def scans() -> tuple[tuple[int, dict], tuple[int, dict]]:
                engine = create_engine(servers.database_url)
                try:
                    return await stored_leaks(session_factory(engine)), await bus_leaks(
                        servers.nats_url
                    )
                finally:
                    await engine.dispose()

            (tables, stored), (messages, on_bus) = asyncio.run(scans())
    leaked = request_leaks()
    done = [r for r, view in finished.items() if view.get("status") in {"claimed", "completed"}]
    for line, values in leaked:
        print(f"leak request {line}: {values}")
    for table, values in stored.items():
        print(f"leak table {table}: {values}")
    for stream, values in on_bus.items():
        print(f"leak stream {stream}: {values}")
    states = ", ".join(f"{r}={finished.get(r, {}).get('status', refused.get(r))}" for r in ROUTES)
    print(
        f"routes: {states}; "
        f"{len(Recorder.received)} outbound requests, {tables} tables, {messages} stream messages scanned; "
        f"{time.perf_counter() - started:.0f} s"
    )
    print(
        f"privacy routes={len(ROUTES)} completed={len(done)} leaked={sum(len(v) for _, v in leaked)} "
        f"stored={sum(len(v) for v in stored.values())} on_bus={sum(len(v) for v in on_bus.values())}"
    )


if __name__ == "__main__":
    main()
