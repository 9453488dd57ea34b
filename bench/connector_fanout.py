"""Connector fan-out cost without the network: recorded responses served by httpx.MockTransport.

Prints, for N searches over four sources (PubMed esearch+efetch, CrossRef, Europe PMC, arXiv),
the mean wall time of one fan-out (parse + rate-limit bookkeeping + merge + de-dup) with the
token buckets opened wide, and the mean parse time of each recorded response.
Run: `.venv/bin/python bench/connector_fanout.py [N]` (needs ../shared/fixtures).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path

import httpx
import structlog

from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.registry import build_sources
from research_connector.settings import ConnectorSettings
from research_connector.sources import arxiv, crossref, europepmc, pubmed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.recorded_sources import FIXTURES, HOSTS, recorded_answers


async def main(n: int) -> None:
    if not FIXTURES.exists():
        sys.exit("../shared/fixtures is absent")
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    bodies = recorded_answers()

    def handle(request: httpx.Request) -> httpx.Response:
        path, host = request.url.path, request.url.host
        key = "esearch" if "esearch" in path else "efetch" if "efetch" in path else HOSTS[host]
        return httpx.Response(200, content=bodies[key])

    settings = ConnectorSettings()
    for name in ("pubmed", "crossref", "europepmc", "arxiv"):
        getattr(settings, name).rate_per_s = 1e9
        getattr(settings, name).burst = 10**6
    async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
        registry = build_sources(settings, client=client, incidents=Incidents())
        timings = []
        for i in range(n):
            started = time.perf_counter()
            found = await search_all(
                ["pubmed", "crossref", "europepmc", "arxiv"],
                f"q {i}",
                None,
                10,
                10.0,
                registry=registry,
                incidents=Incidents(),
            )
            timings.append(time.perf_counter() - started)
        assert not found.degraded, found.degraded
    print(
        f"fan-out over 4 sources: {len(found.hits)} merged hits, mean {statistics.mean(timings) * 1000:.2f} ms, "
        f"p95 {sorted(timings)[int(0.95 * len(timings)) - 1] * 1000:.2f} ms (n={n})"
    )
    for label, parse, body in (
        ("pubmed efetch (2 articles)", pubmed.parse_efetch, bodies["efetch"]),
        (
            "crossref works (2)",
            lambda b: crossref.parse_works(__import__("json").loads(b)),
            bodies["crossref"],
        ),
        (
            "europepmc search (3)",
            lambda b: europepmc.parse_search(__import__("json").loads(b)),
            bodies["europepmc"],
        ),
        ("arxiv feed (10)", arxiv.parse_feed, bodies["arxiv"]),
    ):
        started = time.perf_counter()
        for _ in range(200):
            parse(body)
        print(f"parse {label}: {(time.perf_counter() - started) / 200 * 1000:.3f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
