"""What an MCP tool call costs over the HTTP API it wraps: get_claim and search_ledger.

Brings up embedded NATS + Postgres and the gateway alone in a fresh folder (reads need no other
service), seeds `--claims` ledger claims with quotes and verdicts, then for each tool alternates
`--calls` pairs: the tool through the SDK's own client, and the same HTTP requests the tool makes
(get_claim: the claim, its audit rows, the findings; search_ledger: the newest 500 claims, filtered
by the same words) sent directly with httpx, each with its JSON decoded. The overhead of a call is
its tool latency minus its paired direct latency (pairs cancel the machine's drift). Transports:
streamable HTTP at the gateway's `/mcp` (the summary line) and stdio (`research-engine mcp`, the
command an assistant launches).

    .venv/bin/python bench/mcp.py [--calls 200] [--claims 300]

Prints per tool and transport p50 / p95 of both latencies and of the overhead, and the line
`bench:mcp overhead_p50_ms=… overhead_p95_ms=…` (streamable HTTP, both tools pooled).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

# This file is bench/mcp.py: run as a script, its folder would shadow the `mcp` SDK package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import httpx
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from research_engine.stack import Stack
from research_ledger.tables import CriticVerdictRow, MemoryClaim
from research_platform.db import create_engine, session_factory
from research_platform.embedded import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

API = "/api/research/v1"
ANCHORS = (
    (
        "a direct HTTP read of one claim on this machine is the baseline each overhead is measured against "
        "(printed above as direct p50)"
    ),
)
TOPICS = [
    "vitamin D and fractures",
    "aspirin and myocardial infarction",
    "statins and LDL cholesterol",
    "exercise in heart failure",
    "zinc and the common cold",
    "metformin and longevity",
]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


async def seed(database_url: str, count: int) -> list[uuid.UUID]:
    """`count` active claims, each with two quoted supports and a critic verdict."""
    engine = create_engine(database_url)
    ids = []
    try:
        async with session_factory(engine)() as session, session.begin():
            for i in range(count):
                topic = TOPICS[i % len(TOPICS)]
                claim_id = uuid.uuid4()
                ids.append(claim_id)
                session.add(
                    MemoryClaim(
                        id=claim_id,
                        entity=topic.split()[0],
                        question=f"What is known about {topic}? ({i})",
                        statement=f"Trials of {topic} report a modest effect in cohort {i}.",
                        status="active",
                        confidence=0.8,
                        supports=[
                            {
                                "source_id": f"corpus:{i}-{j}",
                                "title": f"Paper {i}-{j}",
                                "quote": f"The {topic} effect was modest in cohort {i}.",
                                "locator": "abstract",
                            }
                            for j in range(2)
                        ],
                        model="offline",
                    )
                )
                await session.flush()
                session.add(
                    CriticVerdictRow(
                        claim_id=claim_id,
                        verdict="promote",
                        score=0.8,
                        reasoning="quotes hold",
                        model="offline",
                    )
                )
    finally:
        await engine.dispose()
    return ids


async def direct_get_claim(http: httpx.AsyncClient, claim_id: uuid.UUID) -> None:
    for path, params in (
        (f"/claims/{claim_id}", None),
        ("/audit", {"claim_id": str(claim_id), "limit": "100"}),
        ("/findings", {"limit": "500"}),
    ):
        reply = await http.get(API + path, params=params)
        reply.raise_for_status()
        reply.json()


async def direct_search(http: httpx.AsyncClient, words: str) -> None:
    reply = await http.get(f"{API}/claims", params={"limit": 500})
    reply.raise_for_status()
    found = [c for c in reply.json() if all(w in c["statement"].lower() for w in words.split())]
    assert found


async def measure(
    client: Client, http: httpx.AsyncClient, claims: list[uuid.UUID], calls: int
) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {
        "get_claim": {"mcp": [], "direct": []},
        "search_ledger": {"mcp": [], "direct": []},
    }
    for i in range(calls):
        claim_id = claims[i % len(claims)]
        words = TOPICS[i % len(TOPICS)].split()[0].lower()
        for tool, direct, args in (
            (
                "get_claim",
                lambda c=claim_id: direct_get_claim(http, c),
                {"claim_id": str(claim_id)},
            ),
            ("search_ledger", lambda w=words: direct_search(http, w), {"text": words, "limit": 20}),
        ):
            started = time.perf_counter()
            result = await client.call_tool(tool, args)
            out[tool]["mcp"].append(time.perf_counter() - started)
            assert not result.is_error, result.content
            started = time.perf_counter()
            await direct()
            out[tool]["direct"].append(time.perf_counter() - started)
    return out


async def run(
    stack: Stack, key: str, claims: list[uuid.UUID], calls: int, warmup: int
) -> dict[str, dict[str, dict[str, list[float]]]]:
    results = {}
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers={"X-API-Key": key}, timeout=60
    ) as http:
        transport = streamable_http_client(
            f"{stack.gateway_url}/mcp",
            http_client=httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=60),
        )
        async with Client(transport) as client:
            await measure(client, http, claims, warmup)
            results["streamable-http"] = await measure(client, http, claims, calls)
        env = {**os.environ, "RESEARCH_API_KEY": key}
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "research_engine.cli", "mcp", "--url", stack.gateway_url],
            env=env,
        )
        async with Client(params) as client:
            await measure(client, http, claims, warmup)
            results["stdio"] = await measure(client, http, claims, calls)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--calls", type=int, default=200, help="Timed calls per tool and transport."
    )
    parser.add_argument("--claims", type=int, default=300, help="Claims seeded in the ledger.")
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        stack = Stack(Path(tmp), gateway_port=free_port())
        stack.start_servers()
        try:
            claims = asyncio.run(seed(stack.database_url, args.claims))
            stack.start_service("gateway")
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{stack.gateway_url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the gateway did not become ready")
                time.sleep(0.5)
            results = asyncio.run(run(stack, stack.admin_key, claims, args.calls, args.warmup))
        finally:
            stack.stop()
    print(
        f"\nbench:mcp ({args.calls} calls per tool and transport, {args.claims} claims, gateway alone)"
    )
    print(
        f"  {'transport':16} {'tool':14} {'direct p50/p95 ms':>20} {'tool p50/p95 ms':>18} {'overhead p50/p95 ms':>22}"
    )
    pooled: dict[str, list[float]] = {}
    for transport, tools in results.items():
        for tool, series in tools.items():
            overhead = [
                1000 * (m - d) for m, d in zip(series["mcp"], series["direct"], strict=True)
            ]
            pooled.setdefault(transport, []).extend(overhead)
            direct_ms = [1000 * d for d in series["direct"]]
            mcp_ms = [1000 * m for m in series["mcp"]]
            print(
                f"  {transport:16} {tool:14} {quantile(direct_ms, 50):9.2f} / {quantile(direct_ms, 95):7.2f}"
                f" {quantile(mcp_ms, 50):9.2f} / {quantile(mcp_ms, 95):6.2f}"
                f" {quantile(overhead, 50):11.2f} / {quantile(overhead, 95):7.2f}"
            )
    stdio = pooled["stdio"]
    print(
        f"  stdio, both tools: overhead p50 {quantile(stdio, 50):.2f} ms, p95 {quantile(stdio, 95):.2f} ms"
    )
    for anchor in ANCHORS:
        print(f"  anchor: {anchor}")
    http = pooled["streamable-http"]
    print_summary(
        f"bench:mcp overhead_p50_ms={quantile(http, 50):.2f} overhead_p95_ms={quantile(http, 95):.2f}"
    )


if __name__ == "__main__":
    main()
