"""bench:living — the living ledger under a retraction wave.

100,000 active claims, 1,000 living reviews resting on them and 10,000 watched claims (claim
verifications under watch) are seeded through the ledger library into the embedded stack (real
NATS, real PostgreSQL, every service as its own process, the demo corpus ingested). Then 100 cited
papers are retracted at once — one `SourcesRetracted` on `research.source.retracted`, the event a
CrossRef / Retraction Watch notice or a re-run's fresh hit becomes — each cited by about 10
reviews (through one of their claims) and 100 watched claims (in their references).

Measured: time from the event to each affected review and watched claim being seen `stale` with
its reason (p50 / p95 / max), the queue depth on the bus (the verifier's, critic's and
replicator's consumers: pending + unacknowledged, peak, read from JetStream's consumer info), the
re-critiques the wave asked for (held in the ledger, waiting there at peak, released to the
critic and judged by the end: the ledger's backlog, next to the critic's queue), the re-verifications (the refresh of a
watched claim) finished per second in a window after the wave and the CPU each cost (the verifier
alone, and every process of the stack), and the latency of a research task submitted during the
wave against the same kind of task before it (a different SciFact question each, so that no
answer comes from the ledger's memory). A wave's work lasts seconds, so the tasks "during" come
one per wave: `--tasks` waves, each retracting `--retracted` papers of its own, a task submitted
right after each wave's event, the queues drained before the next wave. The ratio of the medians
(during / before) comes with a 95 % bootstrap interval (2,000 resamples of each side): its upper
bound <= 2 is the target met, its lower bound > 2 missed, anything else inconclusive.

    task bench:living                 # the full size, 20 tasks a side (~25 min on two cores)
    task bench:living -- --smoke      # 1,000 claims / 10 reviews / 100 watched / 5 retracted, 2 tasks

Seeding: reports and watched claims go through `Ledger.reports` (open, save_version, complete)
and `Ledger.watched.watch`, 200 to a transaction. The claims and the sources they cite are bulk
inserted as rows of the ledger's own tables (`research_platform.tables`): the library writes a
claim only through the critic's lifecycle (task → proposal → verdict, one claim at a time), which
is the modes' path, not a seeding one.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nats
import psutil
from nats.js.errors import NotFoundError
from pipeline import TERMINAL, ingest_demo, questions
from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert

from research_contracts import RunResearch, SourcesRetracted, Tier, subjects
from research_engine.stack import Stack
from research_ledger import UnitOfWork
from research_ledger.tables import MemoryClaim, ResearchSource
from research_ledger.watched import jitter
from research_platform.db import create_engine, session_factory
from research_platform.embedded import free_port
from research_privacy.boundary import identifiers_left
from research_reports import Reference, Report, Section

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

SERVICE = "bench-living"
CHUNK = 200  # reports per seeding transaction
CLAIM_CHUNK = 1000  # rows per insert: asyncpg takes at most 32,767 parameters
CONSUMERS = (
    (subjects.VERIFICATIONS_STREAM, subjects.VERIFIER_REQUESTS_DURABLE),
    (subjects.CLAIMS_STREAM, subjects.CRITIC_RECRITIQUE_DURABLE),
    (subjects.CLAIMS_STREAM, subjects.REPLICATOR_RETRACTIONS_DURABLE),
    (subjects.REVIEWS_STREAM, subjects.REVIEWER_REQUESTS_DURABLE),
)


def paper(n: int) -> str:
    return f"doi:10.5555/living.{n}"


@dataclass
class Plan:
    """Which rows cite which papers; deterministic (seed 40)."""

    claims: int
    reviews: int
    watched: int
    retracted: int
    reviews_per_paper: int
    watched_per_paper: int
    waves: int = 1  # each retracts `retracted` papers of its own; the stale times are wave 0's
    claim_ids: list[uuid.UUID] = field(default_factory=list)
    claim_papers: list[list[str]] = field(default_factory=list)
    review_ids: list[uuid.UUID] = field(default_factory=list)
    watched_ids: list[uuid.UUID] = field(default_factory=list)
    watched_papers: list[list[str]] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    affected_reviews: set[uuid.UUID] = field(default_factory=set)  # by wave 0
    affected_watched: set[uuid.UUID] = field(default_factory=set)

    def build(self) -> Plan:
        rng = random.Random(40)
        pool = self.claims  # papers doi:…/living.0 … pool-1, one per claim, plus a second support
        self.claim_ids = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(self.claims)]
        self.claim_papers = [[paper(c), paper(rng.randrange(pool))] for c in range(self.claims)]
        self.review_ids = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(self.reviews)]
        self.watched_ids = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(self.watched)]
        self.watched_papers = [
            [paper(rng.randrange(pool)) for _ in range(3)] for _ in self.watched_ids
        ]
        per_review = self.claims // self.reviews
        self.gone = [f"doi:10.5555/retracted.{j}" for j in range(self.retracted * self.waves)]
        for j, gone in enumerate(self.gone):
            first = j < self.retracted
            for r in rng.sample(range(self.reviews), self.reviews_per_paper):
                c = r * per_review + rng.randrange(per_review)  # one of the review's claims
                self.claim_papers[c].append(gone)
                if first:
                    self.affected_reviews.add(self.review_ids[r])
            for w in rng.sample(range(self.watched), self.watched_per_paper):
                self.watched_papers[w].append(gone)
                if first:
                    self.affected_watched.add(self.watched_ids[w])
        return self

    def wave(self, k: int) -> list[str]:
        """The papers wave `k` retracts."""
        return self.gone[k * self.retracted : (k + 1) * self.retracted]

    def review_claims(self, r: int) -> range:
        per_review = self.claims // self.reviews
        return range(r * per_review, (r + 1) * per_review)


def report(kind: str, title: str, papers: list[str]) -> Report:
    return Report(
        title=title,
        kind=kind,
        sections=[Section(title="Summary", body=title, requires_citations=False)],
        references=[
            Reference(id=n, title=f"Paper {p.rsplit('.', 1)[-1]}", paper_id=p, doi=p[4:])
            for n, p in enumerate(papers, 1)
        ],
    )


async def seed(database_url: str, plan: Plan, claims_text: list[str]) -> dict[str, float]:
    engine = create_engine(database_url, pool_size=2, max_overflow=0)
    sessions = session_factory(engine)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    papers = sorted({p for ps in plan.claim_papers for p in ps})
    async with sessions() as session, session.begin():
        for i in range(0, len(papers), CLAIM_CHUNK):
            await session.execute(
                insert(ResearchSource)
                .values(
                    [
                        {
                            "source_id": p,
                            "source": "crossref",
                            "title": f"Paper {p.rsplit('.', 1)[-1]}",
                            "authors": [],
                            "doi": p[4:],
                            "abstract": "",
                            "metadata": {},
                            "retracted": False,
                        }
                        for p in papers[i : i + CLAIM_CHUNK]
                    ]
                )
                .on_conflict_do_nothing()
            )
        now = datetime.now(UTC)
        for i in range(0, plan.claims, CLAIM_CHUNK):
            rows = []
            for c in range(i, min(plan.claims, i + CLAIM_CHUNK)):
                topic = claims_text[c % len(claims_text)]
                rows.append(
                    {
                        "id": plan.claim_ids[c],
                        "task_id": None,
                        "entity": f"living-{c // max(1, plan.claims // plan.reviews)}",
                        "question": f"Is it true that {topic.rstrip('.')}?",
                        "statement": topic,
                        "status": "active",
                        "confidence": 0.7,
                        "supports": [
                            {"source_id": p, "quote": topic, "title": "", "locator": "abstract"}
                            for p in plan.claim_papers[c]
                        ],
                        "supersedes": [],
                        "decay_at": now + timedelta(days=365),
                        "model": "bench",
                        "dropped_supports": 0,
                        "critic_timeouts": 0,
                        "decided_at": now,
                    }
                )
            await session.execute(insert(MemoryClaim).values(rows))
    timings["claims_s"] = time.perf_counter() - started

    started = time.perf_counter()
    for i in range(0, plan.reviews, CHUNK):
        async with sessions() as session, session.begin():
            ledger = UnitOfWork(session, service=SERVICE)
            for r in range(i, min(plan.reviews, i + CHUNK)):
                review_id, run_id = plan.review_ids[r], f"review-seed-{r}"
                claims = plan.review_claims(r)
                cited = list(dict.fromkeys(p for c in claims for p in plan.claim_papers[c]))
                title = f"Living review {r}: {claims_text[r % len(claims_text)]}"
                await ledger.reports.open(
                    review_id,
                    kind="review",
                    run_id=run_id,
                    subject=title,
                    subject_key=f"living-{r}",
                    request={"topic": title},
                )
                body = report("review", title, cited)
                await ledger.reports.save_version(
                    review_id,
                    run_id=run_id,
                    content=body.model_dump(mode="json"),
                    markdown="",
                    claim_ids=[plan.claim_ids[c] for c in claims],
                )
                await ledger.reports.complete(review_id, outcome="seeded")
    timings["reviews_s"] = time.perf_counter() - started

    started = time.perf_counter()
    for i in range(0, plan.watched, CHUNK):
        async with sessions() as session, session.begin():
            ledger = UnitOfWork(session, service=SERVICE)
            for w in range(i, min(plan.watched, i + CHUNK)):
                verification_id, run_id = plan.watched_ids[w], f"verification-seed-{w}"
                claim = claims_text[w % len(claims_text)]
                await ledger.reports.open(
                    verification_id,
                    kind="verification",
                    run_id=run_id,
                    subject=claim,
                    subject_key=claim[:200].lower(),
                    request={"sources": [], "filters": None, "watch": True, "origin": "api"},
                )
                await ledger.reports.save_version(
                    verification_id,
                    run_id=run_id,
                    content=report("verification", claim, plan.watched_papers[w]).model_dump(
                        mode="json"
                    ),
                    markdown="",
                    review={"verdict": "SUPPORTED", "confidence": "MEDIUM"},
                )
                await ledger.reports.complete(verification_id, outcome="SUPPORTED")
                await ledger.watched.watch(verification_id, claim, interval_days=30.0)
    timings["watched_s"] = time.perf_counter() - started
    await engine.dispose()
    return timings


@dataclass
class Watch:
    """Samples the wave: first time each affected report is seen marked, queue depths, CPU."""

    database_url: str
    nats_url: str
    affected: set[uuid.UUID]
    every_s: float = 0.25
    seen: dict[uuid.UUID, float] = field(default_factory=dict)
    queue_peak: dict[str, int] = field(default_factory=dict)
    held_peak: int = 0  # re-critiques waiting in the ledger (not yet on the critic's queue)
    depth: int = -1  # the consumers' pending + unacked and the held re-critiques, last sample
    t0: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)

    async def sample(self) -> None:
        engine = create_engine(self.database_url, pool_size=1, max_overflow=0)
        nc = await nats.connect(self.nats_url)
        js = nc.jetstream()
        ids = list(self.affected)
        try:
            while not self.stop.is_set():
                waiting = [i for i in ids if i not in self.seen]
                if waiting:
                    async with engine.connect() as conn:
                        rows = await conn.execute(
                            text(
                                "SELECT id FROM reports WHERE id = ANY(:ids)"
                                " AND (status <> 'completed' OR current_version > 1)"
                            ),
                            {"ids": waiting},
                        )
                        now = time.perf_counter() - self.t0
                        for (report_id,) in rows:
                            self.seen[report_id] = now
                async with engine.connect() as conn:
                    held = await conn.scalar(
                        text("SELECT count(*) FROM held_recritiques WHERE requested_at IS NULL")
                    )
                self.held_peak = max(self.held_peak, int(held or 0))
                total = int(held or 0)
                for stream, durable in CONSUMERS:
                    try:
                        info = await js.consumer_info(stream, durable)
                    except NotFoundError:  # not created yet
                        continue
                    depth = int(info.num_pending or 0) + int(info.num_ack_pending or 0)
                    self.queue_peak[durable] = max(self.queue_peak.get(durable, 0), depth)
                    total += depth
                self.depth = total
                await asyncio.sleep(self.every_s)
        finally:
            await nc.close()
            await engine.dispose()


def cpu_seconds(stack: Stack) -> dict[str, float]:
    """CPU seconds so far of each service process and of the embedded servers (with children)."""
    out: dict[str, float] = {}
    for name in stack.services:
        try:
            t = psutil.Process(stack.process(name).pid).cpu_times()
            out[name] = t.user + t.system
        except psutil.Error:
            out[name] = 0.0
    servers = 0.0
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if str(stack.data_dir) in " ".join(proc.info["cmdline"] or []):
                t = proc.cpu_times()
                servers += t.user + t.system
                for child in proc.children(recursive=True):
                    c = child.cpu_times()
                    servers += c.user + c.system
        except psutil.Error:
            continue
    out["servers"] = servers
    return out


async def reverified(database_url: str, ids: set[uuid.UUID]) -> int:
    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    async with engine.connect() as conn:
        done = await conn.scalar(
            text(
                "SELECT count(*) FROM watched_claims WHERE runs > 0 AND verification_id = ANY(:ids)"
            ),
            {"ids": list(ids)},
        )
    await engine.dispose()
    return int(done or 0)


async def recritique_counts(database_url: str) -> tuple[int, int, int]:
    """The re-critiques the ledger holds: (all, released to the critic, judged by it)."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT count(*), count(requested_at), count(settled_at) FROM held_recritiques"
                )
            )
        ).one()
    await engine.dispose()
    return int(row[0]), int(row[1]), int(row[2])


async def stale_with_reason(database_url: str, ids: set[uuid.UUID]) -> int:
    """How many of `ids` have a `research.report.stale` audit row naming a retracted source."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    async with engine.connect() as conn:
        found = await conn.scalar(
            text(
                "SELECT count(DISTINCT subject_ids->>'report_id') FROM audit_events"
                " WHERE action = 'research.report.stale'"
                " AND subject_ids->>'report_id' = ANY(:ids)"
                " AND payload->>'reason' LIKE 'cited source % retracted'"
            ),
            {"ids": [str(i) for i in ids]},
        )
    await engine.dispose()
    return int(found or 0)


def plain(qs: list[str]) -> list[str]:
    """The questions nothing in the privacy boundary could take for an identifier (no digits: a
    SciFact claim such as '… 5% …' can read as a record number once cut down to its entity)."""
    return [q for q in qs if not any(ch.isdigit() for ch in q) and not identifiers_left(q)]


def ratio_interval(
    before: list[float], during: list[float], resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of median(during) / median(before), each side resampled."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.median(rng.choices(during, k=len(during)))
        / statistics.median(rng.choices(before, k=len(before)))
        for _ in range(resamples)
    )
    return ratios[int(0.025 * (resamples - 1))], ratios[int(0.975 * (resamples - 1))]


def reading(low: float, high: float, bound: float = 2.0) -> str:
    """The target `ratio <= bound` read from its interval: met, missed or inconclusive."""
    return "met" if high <= bound else "missed" if low > bound else "inconclusive"


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return (
        ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]
        if ordered
        else float("nan")
    )


async def task_latencies(stack: Stack, qs: list[str], timeout: float) -> list[float]:
    """Each question as a research task, one at a time: publish → its claim decided (seconds)."""
    nc = await nats.connect(stack.nats_url)
    engine = create_engine(stack.database_url, pool_size=1, max_overflow=0)
    out = []
    try:
        for q in qs:
            task = RunResearch(question=q, tier=Tier.priority, origin="bench")
            started = time.perf_counter()
            await nc.jetstream().publish(
                subjects.task_subject("priority"),
                task.model_dump_json().encode(),
                headers={subjects.MSG_ID_HEADER: f"task-{task.task_id}"},
            )
            deadline = started + timeout
            while time.perf_counter() < deadline:
                async with engine.connect() as conn:
                    decided = await conn.scalar(
                        text(
                            "SELECT count(*) FROM memory_claims WHERE task_id = :t"
                            " AND status = ANY(:terminal)"
                        ),
                        {"t": task.task_id, "terminal": list(TERMINAL)},
                    )
                if decided:
                    break
                await asyncio.sleep(0.2)
            else:
                raise SystemExit(f"a research task was not decided within {timeout:.0f} s")
            out.append(time.perf_counter() - started)
    finally:
        await nc.close()
        await engine.dispose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=100_000)
    parser.add_argument("--reviews", type=int, default=1_000)
    parser.add_argument("--watched", type=int, default=10_000)
    parser.add_argument("--retracted", type=int, default=100)
    parser.add_argument("--reviews-per-paper", type=int, default=10)
    parser.add_argument("--watched-per-paper", type=int, default=100)
    parser.add_argument(
        "--smoke", action="store_true", help="1,000 claims / 10 reviews / 100 watched / 5 retracted"
    )
    parser.add_argument(
        "--tasks",
        type=int,
        default=20,
        help="Research tasks before, and waves (one task each) during.",
    )
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=15.0,
        help="Longest wait for the queues to drain between waves (a wave's marking lasts ~9 s; "
        "the paced refreshes it starts may outlast it).",
    )
    parser.add_argument(
        "--window", type=float, default=120.0, help="Seconds of refreshes measured after the wave."
    )
    parser.add_argument("--in-flight", type=int, default=4, help="REPLICATOR__WATCHED_IN_FLIGHT.")
    parser.add_argument(
        "--recritique-in-flight", type=int, default=4, help="REPLICATOR__RECRITIQUE_IN_FLIGHT."
    )
    parser.add_argument("--stale-timeout", type=float, default=300.0)
    parser.add_argument("--task-timeout", type=float, default=600.0)
    args = parser.parse_args()
    if args.smoke:
        args.claims, args.reviews, args.watched, args.retracted = 1_000, 10, 100, 5
        args.reviews_per_paper, args.watched_per_paper = 2, 20
        args.window = min(args.window, 30.0)
        args.tasks = min(args.tasks, 2)
    load = " ".join(f"{x:.2f}" for x in psutil.getloadavg())
    print(f"bench:living — machine load average (1/5/15 min) at start: {load}")
    plan = Plan(
        args.claims,
        args.reviews,
        args.watched,
        args.retracted,
        args.reviews_per_paper,
        args.watched_per_paper,
        waves=args.tasks,
    ).build()
    claims_text = [
        q.removeprefix("Is it true that ").rstrip("?") + "." for q in plain(questions(600))
    ]
    spread_days = [jitter(w, 30.0, 0.5) / timedelta(days=1) for w in plan.watched_ids]
    per_day = [0] * 15
    for d in spread_days:
        per_day[min(14, int(d))] += 1
    dev = plain(questions(300, "dev"))
    qs = (dev * (2 * args.tasks + 1))[: 2 * args.tasks + 1]  # the demo questions may be few
    with tempfile.TemporaryDirectory(prefix="bench-living-") as tmp:
        stack = Stack(
            Path(tmp),
            gateway_port=free_port(),
            extra_env={
                "REPLICATOR__WATCHED_IN_FLIGHT": str(args.in_flight),
                "REPLICATOR__WATCHED_TICK_S": "2",
                "REPLICATOR__RECRITIQUE_IN_FLIGHT": str(args.recritique_in_flight),
            },
        )
        stack.start_servers()
        try:
            errors: list[BaseException] = []

            def _ingest_thread() -> None:
                try:
                    asyncio.run(ingest_demo(stack.database_url))
                except BaseException as exc:  # noqa: BLE001 - re-raised below
                    errors.append(exc)

            ingest = threading.Thread(target=_ingest_thread)  # the corpus and the ledger at once
            ingest.start()
            print(
                f"seeding {args.claims:,} claims, {args.reviews:,} reviews, {args.watched:,} watched claims…",
                flush=True,
            )
            timings = asyncio.run(seed(stack.database_url, plan, claims_text))
            print("  " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()), flush=True)
            ingest.join()
            if errors:
                raise errors[0]
            stack.start_services()
            stack.wait_ready(timeout=600)
            print(f"before the wave: {args.tasks} research tasks, one at a time…", flush=True)
            asyncio.run(task_latencies(stack, qs[-1:], args.task_timeout))  # warm-up, not counted
            before = asyncio.run(task_latencies(stack, qs[: args.tasks], args.task_timeout))

            watch = Watch(
                stack.database_url, stack.nats_url, plan.affected_reviews | plan.affected_watched
            )
            sampler = threading.Thread(target=lambda: asyncio.run(watch.sample()), daemon=True)
            cpu0 = cpu_seconds(stack)
            watch.t0 = time.perf_counter()
            sampler.start()

            async def _retract(k: int) -> None:
                event = SourcesRetracted(
                    source_ids=plan.wave(k), origin="retraction_watch", notice=f"bench:living {k}"
                )
                nc = await nats.connect(stack.nats_url)
                await nc.jetstream().publish(
                    subjects.SOURCE_RETRACTED,
                    event.model_dump_json().encode(),
                    headers={subjects.MSG_ID_HEADER: event.msg_id()},
                )
                await nc.close()

            during: list[float] = []
            drained: list[float] = []
            for k in range(args.tasks):
                if k:  # the previous wave's work done: each task meets a wave at its start
                    drain_start = time.perf_counter()
                    while (
                        watch.depth != 0 and time.perf_counter() - drain_start < args.drain_timeout
                    ):
                        time.sleep(0.5)
                    drained.append(time.perf_counter() - drain_start)
                asyncio.run(_retract(k))
                if not k:
                    print(
                        f"retracted {args.retracted} papers; a research task after each of"
                        f" {args.tasks} waves…",
                        flush=True,
                    )
                during += asyncio.run(
                    task_latencies(stack, [qs[args.tasks + k]], args.task_timeout)
                )
            deadline = time.perf_counter() + args.stale_timeout
            while len(watch.seen) < len(watch.affected) and time.perf_counter() < deadline:
                time.sleep(0.5)
            stale_at = time.perf_counter()
            refreshed0 = asyncio.run(reverified(stack.database_url, plan.affected_watched))
            cpu1 = cpu_seconds(stack)
            print(f"all marked; {args.window:.0f} s of refreshes…", flush=True)
            time.sleep(args.window)
            refreshed1 = asyncio.run(reverified(stack.database_url, plan.affected_watched))
            with_reason = asyncio.run(stale_with_reason(stack.database_url, watch.affected))
            held, released, judged = asyncio.run(recritique_counts(stack.database_url))
            cpu2 = cpu_seconds(stack)
            window = time.perf_counter() - stale_at
            watch.stop.set()
            sampler.join(timeout=10)
            died = [n for n in stack.services if stack.process(n).poll() is not None]
        finally:
            stack.stop()
    load = " ".join(f"{x:.2f}" for x in psutil.getloadavg())
    times = [watch.seen[i] for i in watch.affected if i in watch.seen]
    missing = len(watch.affected) - len(times)
    refreshes = refreshed1 - refreshed0
    verifier_cpu = cpu2["verifier"] - cpu1["verifier"]
    stack_cpu = sum(cpu2.values()) - sum(cpu1.values())
    ratio = statistics.median(during) / statistics.median(before)
    low, high = ratio_interval(before, during)
    peak = max(watch.queue_peak.values(), default=0)
    print(
        f"\nbench:living — {args.retracted} retracted papers a wave, {args.tasks} waves;"
        " wave 0's event → marked stale"
    )
    print(
        f"  affected: {len(plan.affected_reviews):,} reviews, {len(plan.affected_watched):,} watched claims;"
        f" marked {len(times):,} (with the reason {with_reason:,}), missing {missing}"
    )
    print(
        f"  time to stale: p50 {quantile(times, 0.5):.2f} s, p95 {quantile(times, 0.95):.2f} s,"
        f" max {max(times, default=float('nan')):.2f} s;"
        f" replicator CPU {cpu1['replicator'] - cpu0['replicator']:.1f} s, whole stack"
        f" {sum(cpu1.values()) - sum(cpu0.values()):.1f} s from the event to the last one marked"
    )
    per_refresh = (
        f"{verifier_cpu / refreshes:.2f} s verifier, {stack_cpu / refreshes:.2f} s whole stack"
        if refreshes
        else f"n/a (none finished; verifier {verifier_cpu:.1f} s, stack {stack_cpu:.1f} s CPU)"
    )
    print(
        f"  refreshes (watched re-verifications): {refreshes} in {window:.0f} s ="
        f" {refreshes / window:.3f}/s; CPU per refresh {per_refresh} (in flight ≤ {args.in_flight})"
    )
    print(
        "  queue depth peak (pending + unacked): "
        + ", ".join(f"{k} {v}" for k, v in watch.queue_peak.items())
    )
    print(
        f"  re-critiques: {held} held by the wave, {released} released to the critic, {judged}"
        f" judged by the end; waiting in the ledger at peak {watch.held_peak}, on the critic's"
        f" queue at peak {watch.queue_peak.get(subjects.CRITIC_RECRITIQUE_DURABLE, 0)}"
        f" (in flight ≤ {args.recritique_in_flight})"
    )
    print(
        f"  research task latency: before {', '.join(f'{x:.1f}' for x in before)} s,"
        f" during {', '.join(f'{x:.1f}' for x in during)} s → ratio {ratio:.2f} (medians),"
        f" 95 % interval {low:.2f}–{high:.2f} over {len(before)} and {len(during)} tasks"
    )
    print(
        f"  target: ratio <= 2 → {reading(low, high)} (met when the interval's upper bound is <= 2,"
        f" missed when its lower bound is > 2); waits for the queues to drain between waves:"
        f" median {statistics.median(drained) if drained else 0:.1f} s,"
        f" max {max(drained, default=0):.1f} s"
    )
    print(
        f"  watched claims' due times over a 30-day interval (spread 0.5): {min(spread_days):.1f}–"
        f"{max(spread_days):.1f} d early, per day {min(per_day)}–{max(per_day)}"
    )
    print(f"  load average at end: {load}" + (f"; exited: {died}" if died else ""))
    print(f"  affected={len(watch.affected)} marked={len(times)} with_reason={with_reason}")
    print_summary(
        f"bench:living claims={args.claims} reviews={args.reviews} watched={args.watched}"
        f" retracted={args.retracted} stale_p95_s={quantile(times, 0.95):.2f}"
        f" task_latency_ratio={ratio:.2f} ratio_ci95={low:.2f}-{high:.2f} tasks={len(during)}"
        f" target={reading(low, high)} queue_peak={peak}",
        keep=not args.smoke,
    )


if __name__ == "__main__":
    main()
