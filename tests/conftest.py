"""Shared fixtures: one set of real servers per test session, migrated once."""

from __future__ import annotations

import os
import tempfile
import tomllib
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import nats
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bench.harness.servers import Servers, start_servers
from research_gateway.auth import Role
from research_platform import metrics
from research_platform.broker import ensure_streams
from research_platform.db import create_engine, session_factory
from research_platform.embedded import free_port
from research_platform.migrate import upgrade
from tests.keys import headers_by_role
from tests.teardown import stopped

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One installation secret for every process of the test session (the gateway in-process, a stack's
# services), instead of a file in the working directory's `.research-engine/`.
os.environ.setdefault("INSTALLATION_SECRET", "test-session-installation-secret")
# Failed key checks are counted in the session's one database, and every in-process gateway's
# client is 127.0.0.1: one module's deliberate 401s (bad-key probes, the fuzzer's) would turn the
# next module's expected 401s into 429s. The throttle's own tests set their limits explicitly.
os.environ.setdefault("GATEWAY_AUTH__FAILED_ATTEMPTS", "1000000")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """`../shared` (real data and recorded responses); tests that need it skip without it."""
    if not SHARED.exists():
        pytest.skip("../shared is not present: the real data and fixtures are needed for this test")
    return SHARED


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    with tempfile.TemporaryDirectory(prefix="re-test-") as tmp, start_servers(Path(tmp)) as found:
        upgrade(found.database_url)
        yield found


@pytest.fixture(scope="session")
async def engine(servers: Servers) -> AsyncIterator[AsyncEngine]:
    eng = create_engine(servers.database_url, pool_size=5, max_overflow=10)
    yield eng
    await eng.dispose()


@pytest.fixture(scope="session")
def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return session_factory(engine)


@pytest.fixture
async def api_keys(sessions: async_sessionmaker[AsyncSession]) -> dict[Role, dict[str, str]]:
    """role → request headers with a fresh live key of that role (reader, researcher, admin)."""
    return await headers_by_role(sessions)


@pytest.fixture
async def nc(servers: Servers) -> AsyncIterator[nats.NATS]:
    conn = await nats.connect(servers.nats_url)
    await ensure_streams(conn.jetstream())
    yield conn
    await stopped(conn.close(), "test NATS connection")


@pytest.fixture(scope="session")
def metrics_url() -> str:
    """The test process serves its Prometheus registry once, like a service with METRICS_PORT."""
    port = free_port()
    metrics.serve(port, "127.0.0.1")
    return f"http://127.0.0.1:{port}/metrics"


@pytest.fixture
def unique() -> str:
    """A short unique token for entities, subjects and names used by one test."""
    return (
        "u" + uuid.uuid4().hex[:10]
    )  # never all digits: a bare 6+ digit number reads as a record number


def tier_markers() -> frozenset[str]:
    """The tiers: every marker registered in `[tool.pytest.ini_options] markers` of pyproject.toml.

    Read from the file rather than `config.getini("markers")`, which also holds what plugins
    register (`asyncio`, `timeout`), and those are not tiers.
    """
    options = (
        tomllib.loads((REPO / "pyproject.toml").read_text())
        .get("tool", {})
        .get("pytest", {})
        .get("ini_options", {})
    )
    return frozenset(line.split(":", 1)[0].strip() for line in options.get("markers", []))


class Marked(Protocol):
    """What `refuse_untiered` reads of a collected test (a `pytest.Item`, or a stand-in)."""

    @property
    def nodeid(self) -> str: ...

    def iter_markers(self) -> Iterable[pytest.Mark]: ...


def refuse_untiered(items: Sequence[Marked], tiers: frozenset[str]) -> None:
    """Raise `pytest.UsageError` naming every item that carries none of `tiers`."""
    untiered = [
        item.nodeid for item in items if not tiers & {mark.name for mark in item.iter_markers()}
    ]
    if untiered:
        listed = "\n  ".join(untiered)
        raise pytest.UsageError(
            f"{len(untiered)} test(s) carry no tier marker (one of {', '.join(sorted(tiers))}; "
            f"add `pytestmark = pytest.mark.<tier>` or a decorator):\n  {listed}"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test without a tier marker, then run e2e tests last.

    Every test says which tier it belongs to (unit, integration, e2e, … — the markers registered
    in pyproject.toml), so `-m unit` selects all the fast ones and none slips through untiered:
    collection stops with the list of tests that carry none.

    E2e tests run last: their service processes share the bus and keep consuming until the
    session ends, so in-process consumers of other tests must be done by then.

    That is why a fixture that consumes on the shared bus (an in-process service, a stack of
    processes, a request/reply responder) is package-scoped at most, never session-scoped: a
    durable pull consumer or a queue group hands each message to one member, so a consumer left
    running by another package takes a share of the e2e stacks' messages (their metrics then miss
    the work) and, while a synchronous test blocks the event loop, never answers its share
    (GET /search waited 15 s and answered 504 under schemathesis)."""
    refuse_untiered(items, tier_markers())
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
