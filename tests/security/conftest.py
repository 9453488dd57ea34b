"""For the security tests, against the session's real NATS + Postgres: a gateway app in-process
(`gateway`), and the gateway process itself with tight edge limits (`edge_gateway`)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from bench.harness.servers import Servers
from research_engine.stack import Stack
from research_gateway.main import create_app
from research_platform.embedded import free_port
from research_platform.settings import Settings
from tests.teardown import left_within

# The edge limits of `edge_gateway` (a test that relies on one names it from here).
EDGE_ENV = {
    "GATEWAY_EDGE__STREAMS_PER_KEY": "3",
    "GATEWAY_EDGE__EXPORT_TIMEOUT_S": "1",
    "GATEWAY_ALLOWED_HOSTS": '["research.example.org"]',
    # keyless probes of several tests come from one address: the failed-key throttle stays out of it
    "GATEWAY_AUTH__FAILED_ATTEMPTS": "100000",
}

Gateway = Callable[..., AbstractAsyncContextManager[tuple[FastAPI, httpx.AsyncClient]]]


@pytest.fixture
def gateway(servers: Servers) -> Gateway:
    """`async with gateway(**settings) as (app, client):` — the gateway with its lifespan run."""

    @asynccontextmanager
    async def running(
        client: tuple[str, int] | None = None, **settings: Any
    ) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
        # A loopback address of its own: failed key checks are counted in the shared database, so
        # one test's 401s must not become another's 429s.
        client = client or (f"127.{secrets.randbelow(250)}.{secrets.randbelow(250)}.2", 123)
        app = create_app(
            Settings(nats_url=servers.nats_url, database_url=servers.database_url, **settings)
        )
        async with left_within(app.router.lifespan_context(app), "gateway lifespan"):
            transport = httpx.ASGITransport(app=app, client=client)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost", timeout=30
            ) as http:
                yield app, http

    return running


@pytest.fixture(scope="package")
def edge_gateway(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The gateway process alone (no other service) with `EDGE_ENV`; its log is
    `<data_dir>/logs/gateway.log`."""
    for attempt in range(3):  # a free port can be taken by another process before the bind
        running = Stack(
            tmp_path_factory.mktemp("edge"),
            gateway_port=free_port(),
            services=("gateway",),
            nats_url=servers.nats_url,
            database_url=servers.database_url,
            extra_env=EDGE_ENV,
        )
        running.start_servers()
        try:
            running.start_services()
            running.wait_ready(timeout=180)
            break
        except RuntimeError as exc:
            running.stop()
            if "exited at start" not in str(exc) or attempt == 2:
                raise
    try:
        yield running
    finally:
        running.stop()
