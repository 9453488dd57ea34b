"""bench:pipeline — 1,000 batched tasks through the whole pipeline, and the ceilings it cannot beat.

Brings up the embedded stack in a fresh folder (every service its own process), ingests the
demo corpus, publishes N `RunResearch` tasks on `research.task.batched` and waits until every
one has a terminal claim. Measured in the same run on the same machine:

- query embeddings/s of the model, one question at a time (what the pipeline does per task);
- JetStream publish+ack messages/s (sequential publishes, each awaiting its ack);
- PostgreSQL insert commits/s (one row per transaction).

Prints tasks/s, p50/p95 task → verdict latency, the ceilings and the ratio of the pipeline's
tasks/s to the lowest ceiling.  Usage: `task bench:pipeline [-- --tasks 1000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import nats
from sqlalchemy import select, text

from research_contracts import RunResearch, Tier, subjects
from research_engine.stack import Stack
from research_platform.db import create_engine, session_factory
from research_platform.embedded import free_port
from research_platform.models import MemoryClaim

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "src" / "research_engine" / "demo_data"
SCIFACT_TRAIN = REPO.parent / "shared" / "data" / "scifact" / "claims_train.jsonl"
TERMINAL = ("active", "rejected", "superseded", "critic_quarantine")


def questions(n: int) -> list[str]:
    """Real questions: SciFact claims (train split) when ../shared is present, else the demo questions."""
    if SCIFACT_TRAIN.exists():
        claims = [json.loads(line)["claim"] for line in SCIFACT_TRAIN.read_text().splitlines() if line.strip()]
    else:
        claims = [q["question"] for q in json.loads((DEMO / "questions.json").read_text())]
    return [f"Is it true that {claims[i % len(claims)].rstrip('.')}?" for i in range(n)]


def embed_ceiling(qs: list[str]) -> float:
    from research_corpus.embedding import get_embedder

    embedder = get_embedder()
    embedder.embed_one("warm up")
    sample = qs[: min(len(qs), 300)]
    started = time.perf_counter()
    for q in sample:
        embedder.embed_one(q)
    return len(sample) / (time.perf_counter() - started)


async def jetstream_ceiling(url: str, count: int = 3000) -> float:
    nc = await nats.connect(url)
    js = nc.jetstream()
    name = f"BENCH_{uuid.uuid4().hex[:8]}"
    await js.add_stream(name=name, subjects=[f"bench.{name}"])
    payload = RunResearch(question="x" * 80).model_dump_json().encode()
    started = time.perf_counter()
    for n in range(count):
        await js.publish(f"bench.{name}", payload, headers={subjects.MSG_ID_HEADER: str(n)})
    rate = count / (time.perf_counter() - started)
    await js.delete_stream(name)
    await nc.close()
    return rate


async def postgres_ceiling(url: str, count: int = 2000) -> float:
    engine = create_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TEMP TABLE IF NOT EXISTS bench_commits (id uuid, body text)"))
    sessions = session_factory(engine)
    started = time.perf_counter()
    async with sessions() as session:
        await session.execute(text("CREATE TABLE IF NOT EXISTS bench_commits (id uuid, body text)"))
        await session.commit()
        for _ in range(count):
            await session.execute(text("INSERT INTO bench_commits VALUES (:id, :body)"), {"id": uuid.uuid4(), "body": "x" * 200})
            await session.commit()
    rate = count / (time.perf_counter() - started)
    async with sessions() as session:
        await session.execute(text("DROP TABLE bench_commits"))
        await session.commit()
    await engine.dispose()
    return rate


async def run_pipeline(stack: Stack, qs: list[str], timeout: float) -> tuple[float, list[float]]:
    nc = await nats.connect(stack.nats_url)
    js = nc.jetstream()
    published: dict[uuid.UUID, datetime] = {}
    started = time.perf_counter()
    for q in qs:
        task = RunResearch(question=q, tier=Tier.batched, origin="bench")
        published[task.task_id] = datetime.now(UTC)
        await js.publish(
            subjects.task_subject("batched"), task.model_dump_json().encode(), headers={subjects.MSG_ID_HEADER: f"task-{task.task_id}"}
        )
    await nc.close()
    engine = create_engine(stack.database_url)
    sessions = session_factory(engine)
    decided: dict[uuid.UUID, datetime] = {}
    deadline = time.monotonic() + timeout
    ids = list(published)
    while len(decided) < len(ids) and time.monotonic() < deadline:
        async with sessions() as session:
            rows = await session.execute(
                select(MemoryClaim.task_id, MemoryClaim.decided_at).where(
                    MemoryClaim.task_id.in_(ids), MemoryClaim.status.in_(TERMINAL)
                )
            )
            decided.update({task_id: at for task_id, at in rows if at is not None})
        print(f"\r  {len(decided)}/{len(ids)} tasks decided", end="", flush=True)
        await asyncio.sleep(1.0)
    print()
    elapsed = time.perf_counter() - started
    await engine.dispose()
    if len(decided) < len(ids):
        raise SystemExit(f"only {len(decided)}/{len(ids)} tasks decided within {timeout:.0f}s")
    latencies = [(decided[t] - published[t]).total_seconds() for t in ids]
    return len(ids) / elapsed, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    qs = questions(args.tasks)
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        stack = Stack(Path(tmp), gateway_port=free_port())
        stack.start_servers()
        try:
            from research_corpus.ingest import ingest_path

            async def _ingest() -> None:
                engine = create_engine(stack.database_url)
                await ingest_path(session_factory(engine), DEMO / "scifact_demo.jsonl", fmt="scifact", progress=False)
                await engine.dispose()

            asyncio.run(_ingest())
            print("measuring ceilings…")
            embed_rate = embed_ceiling(qs)
            js_rate = asyncio.run(jetstream_ceiling(stack.nats_url))
            pg_rate = asyncio.run(postgres_ceiling(stack.database_url))
            stack.start_services()
            stack.wait_ready(timeout=300)
            print(f"running {len(qs)} batched tasks through the pipeline…")
            tasks_per_s, latencies = asyncio.run(run_pipeline(stack, qs, args.timeout))
        finally:
            stack.stop()
    ceilings = {"query embeddings/s": embed_rate, "JetStream publish+ack msgs/s": js_rate, "Postgres insert commits/s": pg_rate}
    lowest_name, lowest = min(ceilings.items(), key=lambda kv: kv[1])
    q = statistics.quantiles(latencies, n=100)
    print("\nbench:pipeline")
    print(f"  tasks                    {len(latencies)}")
    print(f"  pipeline tasks/s         {tasks_per_s:10.2f}")
    print(f"  task→verdict p50         {q[49]:10.2f} s")
    print(f"  task→verdict p95         {q[94]:10.2f} s")
    for name, rate in ceilings.items():
        print(f"  ceiling {name:<28}{rate:10.1f}")
    print(f"  ratio pipeline / lowest ceiling ({lowest_name}): {tasks_per_s / lowest:.3f}")


if __name__ == "__main__":
    main()
