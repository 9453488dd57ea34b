"""MCP tests run against the running stack: every service a separate process on the session's
real NATS + Postgres, the demo corpus ingested (see bench/harness/stack.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.harness.servers import Servers
from bench.harness.stack import running_stack
from research_engine.stack import Stack
from tests.keys import api_key


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
