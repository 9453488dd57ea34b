"""bench:librarian — how long the librarian takes to validate 1,000,000 active claims (target ≤ 60 s).

Starts an embedded PostgreSQL 18 in a fresh folder (or uses `DATABASE_URL`… never the system
one: pass `--database-url` explicitly to use an existing server), migrates, and seeds N active
claims with two supports each over a pool of known sources: 1 % cite a source that does not
exist (broken_provenance), 1 % decay within 30 days (approaching_decay), the rest are healthy. Claims are created one
second apart (as a ledger grows), so creation order is also physical order.

First it times the raw set-based statement on the same data: one query that resolves every
support of every active claim, checks decay and joins the open librarian findings, returning the
claims that need a change (best of two runs) — what the librarian computes, minus batching,
walking and writing. Then it runs the librarian's own code (`Librarian.validate_batch`, the statement every tick
runs) over the whole ledger and prints seconds, claims/s and the share of the 60 s target:

- pass 1 at `--batch-size` (default 100, the service default): records ~2 % of the claims as
  findings, each with its audit row;
- steady-state passes (nothing new to record) at each of `--steady` batch sizes (default
  100, 1000, 10000) — how much of the time is per-statement round trips rather than SQL work.

Every pass is printed as a ratio to the raw statement; the last line is
`bench:librarian raw_sql_s=… librarian_s=<slowest pass> ratio=…`.
Usage: `task bench:librarian [-- --claims 1000000 --batch-size 100 --steady 100,1000,10000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from research_ledger import Ledger
from research_librarian.main import Librarian
from research_librarian.repository import START
from research_librarian.settings import LibrarianSettings
from research_platform.db import create_engine, session_factory, without_transactions
from research_platform.embedded import EmbeddedPostgres
from research_platform.migrate import upgrade

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

TARGET_S = 60.0

SEED_SOURCES = text(
    """
INSERT INTO research_sources (source_id, source, title, authors, abstract, metadata, retracted, first_seen_at, last_seen_at)
SELECT 'bench:src:' || g, 'bench', 'source ' || g, '[]', '', '{}', false, now(), now()
FROM generate_series(0, CAST(:n AS bigint) - 1) g
ON CONFLICT DO NOTHING
"""
)

SEED_CLAIMS = text(
    """
INSERT INTO memory_claims (id, entity, question, statement, status, confidence, supports, supersedes,
                           decay_at, model, dropped_supports, critic_timeouts, created_at)
SELECT gen_random_uuid(), 'entity-' || (g % 50000), 'bench question ' || g, 'bench statement ' || g, 'active', 0.7,
       jsonb_build_array(
           jsonb_build_object('source_id',
               CASE WHEN g % 100 = 0 THEN 'bench:missing:' || g ELSE 'bench:src:' || (g % CAST(:sources AS bigint)) END,
               'quote', 'a quote', 'locator', 'abstract'),
           jsonb_build_object('source_id', 'bench:src:' || ((g * 7 + 3) % CAST(:sources AS bigint)), 'quote', 'a quote')),
       '{}',
       CASE WHEN g % 100 = 1 THEN now() + interval '10 days' ELSE now() + interval '400 days' END,
       'bench', 0, 0, now() - make_interval(secs => CAST(:claims AS bigint) - g)
FROM generate_series(CAST(:lo AS bigint), CAST(:hi AS bigint)) g
"""
)

RAW_ASSESSMENT = text(
    """
WITH assessed AS (
    SELECT c.id, cited.supports, cited.missing,
           (c.decay_at IS NOT NULL AND c.decay_at <= now() + make_interval(days => 30)) AS decaying
    FROM memory_claims c
    CROSS JOIN LATERAL (
        SELECT count(*) AS supports,
               array_agg(coalesce(s.value ->> 'source_id', '')) FILTER (
                   WHERE NOT EXISTS (SELECT 1 FROM research_sources r WHERE r.source_id = s.value ->> 'source_id')
               ) AS missing
        FROM jsonb_array_elements(CASE jsonb_typeof(c.supports) WHEN 'array' THEN c.supports ELSE '[]'::jsonb END) AS s
    ) AS cited
    WHERE c.status = 'active'
), open AS (
    SELECT unnest(f.claim_ids) AS claim_id, f.id, f.kind FROM findings f
    WHERE f.agent = 'librarian' AND f.resolved_at IS NULL AND f.expires_at > now()
)
SELECT a.id, a.supports, a.missing, a.decaying, o.id AS finding_id, o.kind
FROM assessed a LEFT JOIN open o ON o.claim_id = a.id
WHERE a.supports = 0 OR a.missing IS NOT NULL OR a.decaying OR o.id IS NOT NULL
"""
)


async def raw_sql(database_url: str) -> tuple[float, int]:
    """The raw set-based statement over the whole ledger: (best seconds of two runs, rows)."""
    engine = create_engine(database_url)
    best, rows = float("inf"), 0
    try:
        for _ in range(2):
            async with engine.connect() as conn:
                started = time.perf_counter()
                rows = len((await conn.execute(RAW_ASSESSMENT)).all())
                best = min(best, time.perf_counter() - started)
    finally:
        await engine.dispose()
    return best, rows


async def seed(database_url: str, claims: int, sources: int) -> float:
    engine = create_engine(database_url)
    started = time.perf_counter()
    try:
        async with engine.begin() as conn:
            await conn.execute(SEED_SOURCES, {"n": sources})
        chunk = 100_000
        for lo in range(0, claims, chunk):
            hi = min(claims, lo + chunk) - 1
            async with engine.begin() as conn:
                await conn.execute(
                    SEED_CLAIMS, {"lo": lo, "hi": hi, "sources": sources, "claims": claims}
                )
            print(f"  seeded {hi + 1:>9,} claims", flush=True)
        async with engine.connect() as conn:
            await conn.execute(text("COMMIT"))
            await conn.execute(text("VACUUM ANALYZE memory_claims"))
            await conn.execute(text("VACUUM ANALYZE research_sources"))
            # Write the seeding's dirty pages out now, so the timed passes do not pay for them.
            await conn.execute(text("CHECKPOINT"))
    finally:
        await engine.dispose()
    return time.perf_counter() - started


async def validate_all(database_url: str, batch_size: int) -> tuple[float, int, int]:
    """One full pass of the librarian; (seconds, claims seen, findings recorded)."""
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    ledger = Ledger(sessions, read_sessions=session_factory(without_transactions(engine)))
    librarian = Librarian(ledger, LibrarianSettings(batch_size=batch_size))
    seen_total = 0
    after = START
    try:
        async with sessions() as session:
            before = int(
                await session.scalar(
                    text("SELECT count(*) FROM findings WHERE agent = 'librarian'")
                )
                or 0
            )
        started = time.perf_counter()
        async with librarian.walker() as walk:  # what a run does: one connection for the walk
            while True:
                after, seen = await librarian.validate_batch(after, walk)
                seen_total += seen
                if seen < batch_size:
                    break
        elapsed = time.perf_counter() - started
        async with sessions() as session:
            after_count = int(
                await session.scalar(
                    text("SELECT count(*) FROM findings WHERE agent = 'librarian'")
                )
                or 0
            )
    finally:
        await engine.dispose()
    return elapsed, seen_total, after_count - before


async def bench(
    database_url: str, claims: int, sources: int, batch_size: int, steady_sizes: list[int]
) -> None:
    print(f"seeding {claims:,} active claims over {sources:,} sources…", flush=True)
    seeded = await seed(database_url, claims, sources)
    print(f"seeded in {seeded:.1f}s", flush=True)
    raw_s, raw_rows = await raw_sql(database_url)
    print(
        f"raw set-based statement: {raw_s:.1f}s ({raw_rows:,} claims needing a finding)", flush=True
    )
    first, seen, recorded = await validate_all(database_url, batch_size)
    print(f"pass 1 done in {first:.1f}s", flush=True)
    steady = []
    for size in steady_sizes:
        elapsed, seen_again, again = await validate_all(database_url, size)
        steady.append((size, elapsed, seen_again, again))
        print(f"steady pass at batch {size} done in {elapsed:.1f}s", flush=True)
    print()
    print(
        f"librarian validation of {claims:,} active claims (2 supports each; target ≤ {TARGET_S:.0f}s,"
        f" and ≤ 2 × the raw statement's {raw_s:.1f}s)"
    )
    print(
        f"  pass 1, batch {batch_size:>6}, records findings: {first:7.1f}s  {seen / first:10,.0f} claims/s"
        f"  findings {recorded:,}  → {first / raw_s:.2f} × raw  {'PASS' if first <= TARGET_S else 'MISS'}"
    )
    for size, elapsed, seen_again, again in steady:
        print(
            f"  steady pass, batch {size:>6}:          {elapsed:7.1f}s  {seen_again / elapsed:10,.0f} claims/s"
            f"  findings {again:,}  → {elapsed / raw_s:.2f} × raw  {'PASS' if elapsed <= TARGET_S else 'MISS'}"
        )
    slowest = max([first, *(elapsed for _, elapsed, _, _ in steady)])
    print_summary(
        f"bench:librarian raw_sql_s={raw_s:.2f} librarian_s={slowest:.2f} ratio={slowest / raw_s:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=100_000)
    parser.add_argument(
        "--batch-size",
        type=int,
        default=100,
        help="Batch size of the first pass (service default 100).",
    )
    parser.add_argument(
        "--steady", default="100,1000,10000", help="Batch sizes of the steady-state passes."
    )
    parser.add_argument(
        "--database-url", help="An existing, empty database (default: embedded, temporary)."
    )
    args = parser.parse_args()
    steady = [int(size) for size in args.steady.split(",") if size.strip()]
    if args.database_url:
        upgrade(args.database_url)
        asyncio.run(bench(args.database_url, args.claims, args.sources, args.batch_size, steady))
        return
    with tempfile.TemporaryDirectory(prefix="bench-librarian-") as tmp:
        pg = EmbeddedPostgres(Path(tmp)).start()
        try:
            upgrade(pg.url)
            asyncio.run(bench(pg.url, args.claims, args.sources, args.batch_size, steady))
        finally:
            pg.stop()


if __name__ == "__main__":
    main()
