"""A freshly migrated database of its own for the dashboard tests, read back as `grafana_reader`."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from bench.harness.dashboards import plain_dsn
from bench.harness.servers import Servers
from research_platform.migrate import upgrade
from tests.ops.seed import seed

READER_PASSWORD = "reader-" + uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
async def dashboard_db(servers: Servers) -> str:
    """Create `dash_<hex>`, migrate it (with GRAFANA_DB_PASSWORD set), seed it; yield the reader's DSN."""
    name = "dash_" + uuid.uuid4().hex[:8]
    admin = await asyncpg.connect(plain_dsn(servers.database_url, "postgres"))
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    superuser_url = servers.database_url.rsplit("/", 1)[0] + "/" + name
    previous = os.environ.get("GRAFANA_DB_PASSWORD")
    os.environ["GRAFANA_DB_PASSWORD"] = READER_PASSWORD
    try:
        await asyncio.to_thread(upgrade, superuser_url)
    finally:
        if previous is None:
            os.environ.pop("GRAFANA_DB_PASSWORD", None)
        else:
            os.environ["GRAFANA_DB_PASSWORD"] = previous
    owner = await asyncpg.connect(plain_dsn(servers.database_url, name))
    try:
        await seed(owner)
    finally:
        await owner.close()
    return plain_dsn(servers.database_url, name, "grafana_reader", READER_PASSWORD)


@pytest.fixture
async def reader(dashboard_db: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(dashboard_db)
    yield conn
    await conn.close()
