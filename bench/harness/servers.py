"""Real NATS JetStream and PostgreSQL + pgvector for the test suite.

Chosen in this order:
1. `TEST_NATS_URL` / `TEST_DATABASE_URL` — external servers (the database is migrated);
2. a Docker engine answers → testcontainers (`nats:2.10 -js`, `pgvector/pgvector:pg17`);
3. otherwise the embedded default: nats-server and PostgreSQL 18 from PyPI packages, on free
   ports under a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from research_platform.embedded import EmbeddedNats, EmbeddedPostgres


@dataclass
class Servers:
    nats_url: str
    database_url: str
    kind: str
    nats: EmbeddedNats | None = None


def docker_available() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        return (
            subprocess.run(
                ["docker", "info"], capture_output=True, timeout=10, check=False
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextmanager
def start_servers(tmp: Path) -> Iterator[Servers]:
    nats_url, db_url = os.environ.get("TEST_NATS_URL"), os.environ.get("TEST_DATABASE_URL")
    if nats_url and db_url:
        yield Servers(nats_url, db_url, "external")
        return
    if docker_available():
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.waiting_utils import wait_for_logs
        from testcontainers.postgres import PostgresContainer

        with (
            PostgresContainer("pgvector/pgvector:pg17", driver="asyncpg") as container_pg,
            DockerContainer("nats:2.10")
            .with_command("-js")
            .with_exposed_ports(4222) as container_nats,
        ):
            wait_for_logs(container_nats, "Server is ready")
            host, port = (
                container_nats.get_container_host_ip(),
                container_nats.get_exposed_port(4222),
            )
            yield Servers(
                f"nats://{host}:{port}", container_pg.get_connection_url(), "testcontainers"
            )
        return
    nats = EmbeddedNats(tmp).start()
    pg = EmbeddedPostgres(tmp).start()
    try:
        yield Servers(nats.url, pg.url, "embedded", nats=nats)
    finally:
        nats.stop()
        pg.stop()
