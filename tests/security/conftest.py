"""A gateway app in-process against the session's real NATS + Postgres, for the security tests."""

from __future__ import annotations

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
        client: tuple[str, int] = ("127.0.0.1", 123), **settings: Any
    ) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
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
