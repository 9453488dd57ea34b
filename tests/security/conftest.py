"""A gateway app in-process against the session's real NATS + Postgres, for the security tests."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from bench.harness.servers import Servers
from research_gateway.main import create_app
from research_platform.settings import Settings
from tests.teardown import left_within

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
