"""MCP tests run against the running stack: every service a separate process on the session's
real NATS + Postgres, the demo corpus ingested (see tests/e2e/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from research_engine.stack import Stack
from tests.e2e.conftest import running_stack
from tests.keys import api_key
from tests.servers import Servers


@pytest.fixture(scope="package")
def stack(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(servers, tmp_path_factory) as running:
        yield running


@pytest.fixture
async def keys(sessions) -> dict[str, str]:
    """role → a fresh live key of that role."""
    return {
        role: await api_key(sessions, role, name="mcp")
        for role in ("reader", "researcher", "admin")
    }
