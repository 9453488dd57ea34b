"""bench:dashboards — every Grafana SQL panel's p95 over 10 million audit rows (target ≤ 200 ms each).

Starts an embedded PostgreSQL 18 in a fresh folder (or uses `--database-url`, never an implicit
one), migrates (creating `grafana_reader`), and seeds with generate_series:
- `--rows` audit events (default 10,000,000) spread evenly over `--days` (default 90) ending
  now, one row every ~0.8 s, in time order as an append-only log grows. Actions are weighted as
  a running engine writes them (task/claim lifecycle most, connector degradations, agent
  decisions, review/verification/source-list rows a few percent), with the payload fields the
  panels read. The audit indexes are dropped during the load and rebuilt after (faster; same end state);
- 300,000 tasks with claims and verdicts, 50,000 findings, 30,000 agent runs, 20,000 cache rows.

Then, as `grafana_reader`, each panel's SQL is expanded for its dashboard's default range ending
now (the audit explorer with "All" actions and services, as it opens) and run `--repeats` times
after one warm-up; it prints p50 / p95 per panel and the summary line
`bench:dashboards panels=… worst_p95_ms=… ratio=…` (ratio = worst p95 / 200 ms; ≤ 1 meets the target).

Usage: `task bench:dashboards [-- --rows 10000000 --days 90 --repeats 20]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness.dashboards import explorer_variables, plain_dsn, render, sql_panels
from bench.harness.results import print_summary
from research_platform.embedded import EmbeddedPostgres
from research_platform.migrate import upgrade

TARGET_MS = 200.0
READER_PASSWORD = "bench-reader"  # noqa: S105 - a role of the bench's throwaway database
CHUNK = 1_000_000

# (action, service, weight per 1,000 events)
ACTIONS = [
    ("research.task.submitted", "gateway", 150),
    ("research.task.started", "researcher", 150),
    ("research.claim.proposed", "researcher", 120),
    ("research.claim.promoted", "critic", 121),
    ("research.claim.superseded", "critic", 15),
    ("research.claim.rejected", "critic", 15),
    ("connector.degraded", "connector", 80),
    ("connector.phi_refused", "connector", 5),
    ("consumer.dead_letter", "researcher", 5),
    ("consumer.retrieval_fallback", "researcher", 5),
    ("research.llm.provider_failed", "researcher", 10),
    ("research.task.failed", "researcher", 5),
    ("research.critic.timeout", "critic", 8),
    ("research.critic.quarantine", "critic", 2),
    ("research.critic.drained", "critic", 1),
    ("research.critic.recritique", "critic", 20),
    ("research.correlator.finding", "correlator", 20),
    ("research.correlator.no_pattern", "correlator", 80),
    ("research.correlator.resolved", "correlator", 5),
    ("research.replicator.finding", "replicator", 10),
    ("research.replicator.confirmed", "replicator", 60),
    ("research.replicator.skipped", "replicator", 20),
    ("research.librarian.finding", "librarian", 30),
    ("research.librarian.resolved", "librarian", 10),
    ("research.admin.control", "gateway", 3),
    ("research.admin.denied", "gateway", 1),
    ("research.review.requested", "reviewer", 10),
    ("research.review.completed", "reviewer", 10),
    ("research.review.stale", "reviewer", 2),
    ("research.verification.completed", "verifier", 15),
    ("research.verification.verdict_changed", "verifier", 2),
    ("research.sourcelist.completed", "scout", 10),
]
assert sum(w for *_, w in ACTIONS) == 1000

SEED_AUDIT = """
INSERT INTO audit_events (occurred_at, service, action, task_id, claim_id, subject_ids, payload)
SELECT $3::timestamptz - make_interval(secs => ($2::bigint - g) * $4::float8),
       a.service, a.action,
       CASE WHEN a.action LIKE 'research.task.%' OR a.action LIKE 'research.claim.%'
            THEN ('00000000-0000-4000-8000-' || lpad(to_hex(g / 6), 12, '0'))::uuid END,
       CASE WHEN a.action LIKE 'research.claim.%' OR a.action LIKE 'research.critic.%'
            THEN ('00000000-0000-4000-9000-' || lpad(to_hex(g / 6), 12, '0'))::uuid END,
       CASE a.action
            WHEN 'consumer.dead_letter' THEN jsonb_build_object('subject', (ARRAY['research.task.priority', 'research.claim.pending'])[1 + g % 2])
            WHEN 'connector.degraded' THEN jsonb_build_object('source', (ARRAY['pubmed', 'crossref', 'openalex', 'europepmc', 'arxiv'])[1 + g % 5])
            WHEN 'research.review.stale' THEN jsonb_build_object('review_id', 'rev-' || g)
            ELSE '{}'::jsonb END,
       CASE a.action
            WHEN 'consumer.dead_letter' THEN jsonb_build_object('reason', 'invalid payload')
            WHEN 'connector.degraded' THEN jsonb_build_object('source', (ARRAY['pubmed', 'crossref', 'openalex', 'europepmc', 'arxiv'])[1 + g % 5],
                                                           'reason', (ARRAY['http_429', 'http_503', 'timeout', 'deadline'])[1 + g % 4])
            WHEN 'connector.phi_refused' THEN jsonb_build_object('source', 'pubmed', 'kinds', '["mrn"]'::jsonb)
            WHEN 'research.review.completed' THEN jsonb_build_object('outcome', (ARRAY['PASS', 'REVISION_NEEDED'])[1 + g % 2], 'duration_s', 30 + g % 90)
            WHEN 'research.verification.completed' THEN jsonb_build_object('verdict', (ARRAY['STRONGLY SUPPORTED', 'MIXED EVIDENCE', 'CONTRADICTED'])[1 + g % 3], 'duration_s', 5 + g % 40)
            WHEN 'research.verification.verdict_changed' THEN jsonb_build_object('previous', 'STRONGLY SUPPORTED', 'verdict', 'MIXED EVIDENCE')
            WHEN 'research.sourcelist.completed' THEN jsonb_build_object('duration_s', 3 + g % 10, 'new_sources', g % 4)
            ELSE '{}'::jsonb END
FROM generate_series($1::bigint, LEAST($1::bigint + $5::bigint - 1, $2::bigint - 1)) g
JOIN bench_actions a ON a.slot = (g * 7919) % 1000
"""

SEED_LEDGER = [
    """INSERT INTO research_tasks (id, question, tier, status, origin, request, created_at, updated_at)
       SELECT ('00000000-0000-4000-a000-' || lpad(to_hex(g), 12, '0'))::uuid, 'question ' || g,
              (ARRAY['emergency', 'priority', 'batched'])[1 + g % 3], (ARRAY['claimed', 'claimed', 'claimed', 'failed', 'queued'])[1 + g % 5],
              'bench', '{}', $2::timestamptz - make_interval(secs => ($1::bigint - g) * $3::float8),
              $2::timestamptz - make_interval(secs => ($1::bigint - g) * $3::float8)
       FROM generate_series(0, $1::bigint - 1) g""",
    """INSERT INTO memory_claims (id, task_id, entity, question, statement, status, confidence, supports, supersedes,
                                 model, dropped_supports, critic_timeouts, created_at, updated_at)
       SELECT ('00000000-0000-4000-b000-' || lpad(to_hex(g), 12, '0'))::uuid, t.id, 'entity-' || (g % 5000), t.question, 'statement',
              (ARRAY['active', 'active', 'superseded', 'rejected', 'pending', 'critic_quarantine'])[1 + g % 6], 0.7, '[]', '{}',
              'offline', 0, 0, t.created_at + interval '20 seconds', t.created_at + interval '20 seconds'
       FROM (SELECT id, question, created_at, row_number() OVER (ORDER BY created_at) - 1 AS g FROM research_tasks WHERE status = 'claimed') t""",
    """INSERT INTO critic_verdicts (claim_id, verdict, score, reasoning, supersedes, model, created_at)
       SELECT c.id, (ARRAY['promote', 'promote', 'supersede', 'reject'])[1 + (abs(hashtext(c.id::text)) % 4)], 0.8, 'r', '{}', 'offline',
              c.created_at + make_interval(secs => 20 + abs(hashtext(c.id::text)) % 300)
       FROM memory_claims c WHERE c.status <> 'pending'""",
    """INSERT INTO findings (id, agent, kind, claim_ids, payload, created_at, expires_at, resolved_at)
       SELECT gen_random_uuid(), (ARRAY['correlator', 'replicator', 'librarian'])[1 + g % 3],
              (ARRAY['co_occurrence', 'eroded', 'broken_provenance', 'temporal_trend', 'confirmed', 'approaching_decay'])[1 + g % 6], '{}', '{}',
              $2::timestamptz - make_interval(secs => ($1::bigint / 6 - g) * $3::float8 * 6),
              $2::timestamptz - make_interval(secs => ($1::bigint / 6 - g) * $3::float8 * 6) + interval '180 days',
              CASE WHEN g % 4 = 0 THEN $2::timestamptz END
       FROM generate_series(0, $1::bigint / 6 - 1) g""",
    """INSERT INTO agent_runs (id, agent, trigger, started_at, finished_at, outcome, counts, error)
       SELECT gen_random_uuid(), (ARRAY['correlator', 'replicator', 'librarian'])[1 + g % 3], 'schedule',
              $2::timestamptz - make_interval(secs => ($1::bigint / 10 - g) * $3::float8 * 10),
              $2::timestamptz - make_interval(secs => ($1::bigint / 10 - g) * $3::float8 * 10) + make_interval(secs => 1 + g % 60),
              (ARRAY['completed', 'completed', 'completed', 'failed', 'cancelled'])[1 + g % 5], '{}',
              CASE WHEN g % 5 = 3 THEN 'TimeoutError' END
       FROM generate_series(0, $1::bigint / 10 - 1) g""",
    """INSERT INTO connector_cache (key, source, request, hits, created_at, expires_at)
       SELECT 'k' || g, (ARRAY['pubmed', 'crossref', 'openalex', 'europepmc', 'arxiv'])[1 + g % 5], '{}', '[]',
              $2::timestamptz - make_interval(secs => g), $2::timestamptz - make_interval(secs => g) + interval '24 hours'
       FROM generate_series(0, $1::bigint / 15 - 1) g""",
]


async def seed(dsn: str, rows: int, days: float, end: datetime) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(
            "CREATE TEMP TABLE bench_actions (slot int PRIMARY KEY, action text, service text)"
        )
        slots, slot = [], 0
        for action, service, weight in ACTIONS:
            slots += [(slot + i, action, service) for i in range(weight)]
            slot += weight
        await conn.executemany("INSERT INTO bench_actions VALUES ($1, $2, $3)", slots)
        indexes = await conn.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'audit_events' AND indexname <> 'audit_events_pkey'"
        )
        for index in indexes:
            await conn.execute(f'DROP INDEX "{index["indexname"]}"')
        step = days * 86400 / rows
        started = time.perf_counter()
        for first in range(0, rows, CHUNK):
            await conn.execute(SEED_AUDIT, first, rows, end, step, CHUNK)
            print(
                f"  audit rows {min(first + CHUNK, rows):>11,}  {time.perf_counter() - started:6.0f} s",
                flush=True,
            )
        for index in indexes:
            await conn.execute(index["indexdef"])
        print(f"  audit indexes rebuilt  {time.perf_counter() - started:6.0f} s", flush=True)
        tasks = 300_000
        for statement in SEED_LEDGER:
            arguments = [tasks, end, days * 86400 / tasks]
            await conn.execute(statement, *arguments[: len(set(re.findall(r"\$(\d)", statement)))])
        await conn.execute(
            "VACUUM (ANALYZE)"
        )  # what autovacuum does to an insert-only table: visibility map set
        print(
            f"  ledger tables seeded, vacuumed  {time.perf_counter() - started:6.0f} s", flush=True
        )
    finally:
        await conn.close()


async def measure(
    reader_dsn: str, end: datetime, repeats: int
) -> list[tuple[str, str, float, float, int]]:
    conn = await asyncpg.connect(reader_dsn)
    results = []
    try:
        variables = await explorer_variables(conn)
        for panel in sql_panels():
            sql = render(panel, end, variables if panel.dashboard == "research-audit" else None)
            rows = len(await conn.fetch(sql))  # warm-up
            timings = []
            for _ in range(repeats):
                began = time.perf_counter()
                await conn.fetch(sql)
                timings.append((time.perf_counter() - began) * 1000)
            timings.sort()
            p95 = timings[max(0, round(0.95 * len(timings)) - 1)]
            results.append(
                (
                    panel.dashboard.removeprefix("research-"),
                    panel.title,
                    statistics.median(timings),
                    p95,
                    rows,
                )
            )
    finally:
        await conn.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=float, default=90.0)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--database-url",
        default=None,
        help="an existing, empty server (SQLAlchemy URL); default: embedded",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dashboards-") as tmp:
        pg = None
        url = args.database_url
        if url is None:
            pg = EmbeddedPostgres(Path(tmp)).start()
            url = pg.url
        try:
            os.environ["GRAFANA_DB_PASSWORD"] = READER_PASSWORD
            upgrade(url)
            end = datetime.now(UTC).replace(second=0, microsecond=0)
            database = url.rsplit("/", 1)[1]
            print(
                f"seeding {args.rows:,} audit rows over {args.days:g} days ending {end:%Y-%m-%d %H:%M} UTC",
                flush=True,
            )
            asyncio.run(seed(plain_dsn(url, database), args.rows, args.days, end))
            results = asyncio.run(
                measure(
                    plain_dsn(url, database, "grafana_reader", READER_PASSWORD), end, args.repeats
                )
            )
        finally:
            if pg is not None:
                pg.stop()
    print(f"\n{'dashboard':<10} {'panel':<48} {'p50 ms':>8} {'p95 ms':>8} {'rows':>6}")
    for board, title, p50, p95, rows in results:
        flag = "" if p95 <= TARGET_MS else "  > target"
        print(f"{board:<10} {title[:48]:<48} {p50:8.1f} {p95:8.1f} {rows:6d}{flag}")
    worst = max(p95 for *_, p95, _ in results)
    print_summary(
        f"bench:dashboards panels={len(results)} worst_p95_ms={worst:.1f} ratio={worst / TARGET_MS:.2f}"
    )


if __name__ == "__main__":
    main()
