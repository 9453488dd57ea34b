"""Ingest on the bus: the same SciFact papers written by 1 worker and by N workers, one run each.

For each worker count: a fresh embedded PostgreSQL and NATS in a temporary folder, migrated;
`workers` processes of `research-engine corpus worker` started and given time to load the model
(the run starts once every worker waits on the queue), then `ingest_over_bus` queues the papers
and waits until the queue is empty. The model's threads are split between the workers
(CORPUS__EMBED_THREADS = cores // workers, at least 1), so the machine's cores are used the same
way in every run, and each worker takes `--batch` jobs at a time (CORPUS__INGEST_WORKER_BATCH;
32 here, so a few hundred papers are shared at all: with 128 papers and the default batch of 128 one
worker took every job). Prints papers/s and the load average around each run, and ends with:

    bench:ingest_bus papers=… workers=1,2 seconds=…,… speedup=…

    .venv/bin/python bench/ingest_bus.py [--limit 256] [--workers 1,2] [--batch 32]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"


async def _ready(nc, workers: int, timeout: float = 600) -> None:
    """Until `workers` pull requests wait on the ingest consumer (every worker has loaded)."""
    from nats.js.errors import NotFoundError

    from research_contracts import subjects

    js = nc.jetstream()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(NotFoundError):  # not created yet
            info = await js.consumer_info(subjects.INGEST_STREAM, subjects.INGEST_WORKERS_DURABLE)
            if (info.num_waiting or 0) >= workers:
                return
        await asyncio.sleep(0.5)
    raise TimeoutError("the workers did not start")


async def _run(database_url: str, nats_url: str, source: Path, workers: int) -> tuple[int, float]:
    from research_corpus.ingest_bus import ensure_ingest_stream, ingest_over_bus
    from research_platform.db import create_engine, session_factory
    from research_platform.nats_seeds import connect
    from research_platform.settings import get_settings

    settings = get_settings()
    nc = await connect(nats_url)
    engine = create_engine(database_url)
    try:
        await ensure_ingest_stream(nc, settings)
        await _ready(nc, workers)
        started = time.perf_counter()
        report = await ingest_over_bus(
            session_factory(engine), nc, source, fmt="scifact", progress=False, settings=settings
        )
        return report.added, time.perf_counter() - started
    finally:
        await engine.dispose()
        await nc.close()


def one(source: Path, workers: int, batch: int) -> tuple[int, float]:
    from research_platform.embedded import EmbeddedNats, EmbeddedPostgres
    from research_platform.migrate import upgrade

    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="re-bench-ingest-bus-") as tmp:
        pg = EmbeddedPostgres(Path(tmp) / "pg").start()
        nats = EmbeddedNats(Path(tmp)).start()
        env = {
            **os.environ,
            "NATS_URL": nats.url,
            "DATABASE_URL": pg.url,
            "CORPUS__EMBED_THREADS": str(max(1, cores // workers)),
            "CORPUS__INGEST_WORKER_BATCH": str(batch),
        }
        children = []
        try:
            upgrade(pg.url)
            children = [
                subprocess.Popen(
                    [sys.executable, "-m", "research_engine.cli", "corpus", "worker"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                for _ in range(workers)
            ]
            return asyncio.run(_run(pg.url, nats.url, source, workers))
        finally:
            for child in children:
                child.terminate()
            for child in children:
                child.wait(120)
            nats.stop()
            pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--limit", type=int, help="Only the first N abstracts (default: all 5,183)."
    )
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--batch", type=int, default=32, help="Jobs a worker takes at a time.")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="re-bench-ingest-bus-src-") as tmp:
        source = args.data / "corpus.jsonl"
        if args.limit:
            source = Path(tmp) / "corpus.jsonl"
            with (args.data / "corpus.jsonl").open() as full:
                source.write_text("".join(islice(full, args.limit)))
        seconds = []
        for workers in counts:
            before = os.getloadavg()[0]
            papers, took = one(source, workers, args.batch)
            seconds.append(took)
            print(
                f"{workers} worker(s): {papers} papers in {took:.1f} s ({papers / took:.2f} papers/s); "
                f"load average {before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
                flush=True,
            )
    print_summary(
        f"bench:ingest_bus papers={papers} workers={args.workers} "
        f"seconds={','.join(f'{s:.1f}' for s in seconds)} speedup={seconds[0] / seconds[-1]:.2f}"
    )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
