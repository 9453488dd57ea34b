"""Fixtures of the periodic-agent tests: a second engine stands in for a second replica."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.harness.servers import Servers
from research_platform.db import create_engine


@pytest.fixture
async def replica_engine(servers: Servers) -> AsyncIterator[AsyncEngine]:
    """An independent connection pool, as a second replica of an agent would have."""
    eng = create_engine(servers.database_url, pool_size=3, max_overflow=2)
    yield eng
    await eng.dispose()
