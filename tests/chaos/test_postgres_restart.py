"""PostgreSQL killed with SIGKILL (postmaster and backends) and restarted under load.

A consumer writes one row per JetStream message (keyed by the message, as a claim is keyed by
its task) and acks only after the commit. A third of the way through, the whole server is
killed; the consumer's writes fail and it naks; Postgres restarts on the same port and runs
crash recovery. Every message ends with exactly one row, none lost.

The embedded server runs with `synchronous_commit=off` (fast, but a crash forgets the last
few hundred milliseconds of commits: measured, 21 of 600 acked rows lost). A write whose
message is acked after the commit must be durable, so it commits with `synchronous_commit = on`.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nats.js.api import ConsumerConfig, StorageType, StreamConfig
from sqlalchemy import text

from bench.harness.servers import Servers
from research_platform.db import create_engine
from research_platform.embedded import EmbeddedPostgres
from research_platform.nats_seeds import connect
from tests.burst import RETRYABLE, BurstRecord, consume, publish_until_acked


@pytest.fixture
def pg_dir() -> Iterator[Path]:
    """The server's data folder outside pytest's temporary root: any pytest session starting
    meanwhile (another checkout's) resets that root to 0700, which locks the server's unprivileged
    user out of a folder under it when it restarts."""
    with tempfile.TemporaryDirectory(prefix="re-chaos-pg-") as folder:
        yield Path(folder)


pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(150)]

BURST = 600
DOWN_S = 1.0


@pytest.mark.parametrize(
    "pre_ping", [True, False], ids=["pre-ping", "no-pre-ping"]
)  # researcher, critic: no pre-ping
async def test_postgres_killed_and_restarted_mid_burst_keeps_one_row_per_message(
    servers: Servers, pg_dir: Path, unique: str, pre_ping: bool
) -> None:
    pg = await asyncio.to_thread(EmbeddedPostgres(pg_dir).start)
    engine = create_engine(pg.url, pre_ping=pre_ping)
    stream, subject = f"CHAOS_PG_{unique}", f"test.chaos.pg.{unique}"
    nc = await connect(servers.nats_url)
    js = nc.jetstream(timeout=5)
    record = BurstRecord()
    consumer: asyncio.Task[None] | None = None
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "CREATE TABLE deliveries (message int PRIMARY KEY, applied int NOT NULL DEFAULT 1)"
                )
            )

        async def write_row(index: int) -> None:
            async with engine.begin() as conn:
                await conn.execute(text("SET LOCAL synchronous_commit = on"))
                await conn.execute(
                    text(
                        "INSERT INTO deliveries (message) VALUES (:m)"
                        " ON CONFLICT (message) DO UPDATE SET applied = deliveries.applied + 1"
                    ),
                    {"m": index},
                )

        await js.add_stream(
            StreamConfig(
                name=stream, subjects=[subject], storage=StorageType.FILE, duplicate_window=300
            )
        )
        await js.add_consumer(
            stream, ConsumerConfig(durable_name="writer", ack_wait=5, max_ack_pending=100)
        )
        consumer = asyncio.create_task(
            consume(js, subject, stream, "writer", record, BURST, write_row)
        )
        for index in range(BURST):
            await publish_until_acked(js, subject, index, record)
        while len(record.done) < BURST // 3:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(pg.kill)
        killed_at = time.monotonic()
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(pg.start)
        await asyncio.wait_for(consumer, 90)
        recovered_s = time.monotonic() - killed_at

        async with engine.connect() as conn:
            rows = (
                await conn.execute(
                    text("SELECT count(*), count(DISTINCT message), sum(applied) FROM deliveries")
                )
            ).one()
        assert rows[0] == rows[1] == BURST  # one row per message: nothing lost, nothing doubled
        print(
            f"\npostgres killed for {DOWN_S:.0f}s: {record.work_failures} failed writes (nacked),"
            f" {rows[2] - BURST} writes repeated by redelivery, burst done {recovered_s:.1f}s after the kill"
        )
        assert record.work_failures > 0  # the kill did hit the consumer's writes
    finally:
        if consumer is not None:
            consumer.cancel()
        with contextlib.suppress(*RETRYABLE):
            await js.delete_stream(stream)
        await nc.close()
        await engine.dispose()
        await asyncio.to_thread(pg.stop)
