"""bench:soak — many tasks at a steady open-loop rate; does any service's memory keep growing?

Brings up the embedded stack in a fresh folder (every service its own process), ingests the
demo corpus, then:

- warm-up: `--warmup` tasks at `--rate` (caches, pools and the model reach their working size);
- RSS of every service process (with its children) sampled with psutil — the baseline;
- soak: `--tasks` tasks (default 20,000) published on a fixed schedule at `--rate` per second,
  open loop (a slow pipeline does not slow the arrivals), until every task has a terminal claim;
- RSS sampled again at the end, and every `--sample-s` seconds in between (the peak).

Prints each service's RSS after warm-up, at the end, peak and growth, then one summary line
`bench:soak tasks=… rate=… worst_rss_growth=…% ratio=…` where ratio is the worst service's
end RSS over its warm-up RSS (target: ≤ 1.10). Printed, not asserted.
Usage: `task bench:soak [-- --tasks 1000 --rate 4]`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
from pathlib import Path

import psutil
from pipeline import ingest_demo, questions, run_tasks

from research_engine.stack import Stack
from research_platform.embedded import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary


def rss_mb(stack: Stack) -> dict[str, float]:
    """Resident memory of each service process and its children, in MB (a dead one reads 0)."""
    sizes: dict[str, float] = {}
    for name in stack.services:
        try:
            root = psutil.Process(stack.process(name).pid)
            family = [root, *root.children(recursive=True)]
            sizes[name] = sum(p.memory_info().rss for p in family if p.is_running()) / 2**20
        except psutil.NoSuchProcess:
            sizes[name] = 0.0
    return sizes


class PeakSampler(threading.Thread):
    """Samples RSS every `every_s` seconds while the soak runs, keeping each service's peak."""

    def __init__(self, stack: Stack, every_s: float) -> None:
        super().__init__(daemon=True)
        self.stack, self.every_s = stack, every_s
        self.peak: dict[str, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.every_s):
            for name, mb in rss_mb(self.stack).items():
                self.peak[name] = max(self.peak.get(name, 0.0), mb)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument(
        "--rate", type=float, default=8.0, help="Tasks published per second (open loop)."
    )
    parser.add_argument(
        "--warmup", type=int, default=300, help="Tasks before the baseline RSS sample."
    )
    parser.add_argument(
        "--sample-s", type=float, default=10.0, help="Seconds between peak RSS samples."
    )
    parser.add_argument(
        "--timeout", type=float, default=7200, help="Longest wait for the last terminal claim."
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        stack = Stack(Path(tmp), gateway_port=free_port())
        stack.start_servers()
        try:
            asyncio.run(ingest_demo(stack.database_url))
            stack.start_services()
            stack.wait_ready(timeout=300)
            print(f"warm-up: {args.warmup} tasks at {args.rate}/s…")
            asyncio.run(
                run_tasks(stack, questions(args.warmup, "dev"), args.timeout, rate=args.rate)
            )
            warm = rss_mb(stack)
            sampler = PeakSampler(stack, args.sample_s)
            sampler.start()
            print(f"soak: {args.tasks} tasks at {args.rate}/s (open loop)…")
            achieved, latencies = asyncio.run(
                run_tasks(
                    stack, questions(args.tasks, skip=args.warmup), args.timeout, rate=args.rate
                )
            )
            sampler.done.set()
            sampler.join()
            end = rss_mb(stack)
            restarted = [name for name in stack.services if stack.process(name).poll() is not None]
        finally:
            stack.stop()
    print("\nbench:soak — RSS per service (MB): after warm-up → end (peak), growth")
    growth: dict[str, float] = {}
    for name in warm:
        growth[name] = (end[name] - warm[name]) / warm[name] if warm[name] else float("inf")
        peak = max(sampler.peak.get(name, 0.0), end[name])
        print(
            f"  {name:<11} {warm[name]:8.1f} → {end[name]:8.1f} ({peak:8.1f})  {growth[name] * 100:+6.1f} %"
        )
    worst = max(growth, key=lambda name: growth[name])
    latencies.sort()
    print(
        f"  decided {len(latencies)} tasks; {achieved:.2f} tasks/s first publish → last decision;"
        f" p95 task→verdict {latencies[int(0.95 * (len(latencies) - 1))]:.2f} s"
    )
    if restarted:
        print(f"  exited during the soak: {restarted}")
    print_summary(
        f"bench:soak tasks={args.tasks} rate={args.rate:g} worst_rss_growth={growth[worst] * 100:.1f}%"
        f" ({worst}) ratio={1 + growth[worst]:.3f}"
    )


if __name__ == "__main__":
    main()
