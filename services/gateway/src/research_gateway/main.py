"""Gateway service: the composition root of the HTTP API (FastAPI).

Builds the engine, session factory and broker in the lifespan and mounts the routers:
`tasks` (idempotent submission, task and claim reads), `search` (the local corpus),
`ledger` (findings, audit log, SSE events) and `admin` (operator verbs, admin role). Routes
live under `/api/research/v1`; the OpenAPI document is at `/openapi.json`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI
from prometheus_client import make_asgi_app
from sqlalchemy import text

from research_gateway import admin, ledger, search, tasks
from research_gateway.deps import SERVICE, Session
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory
from research_platform.logging import configure_logging
from research_platform.settings import Settings, get_settings


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        broker = make_broker(settings.require_nats_url(), SERVICE)
        await broker.connect()
        app.state.sessions, app.state.broker = session_factory(engine), broker
        yield
        await broker.stop()
        await engine.dispose()

    app = FastAPI(title="research-engine", version="0.1.0", lifespan=lifespan)
    for module in (tasks, search, ledger, admin):
        app.include_router(module.router)
    app.mount("/metrics", make_asgi_app())

    @app.get("/healthz")
    async def healthz(session: Session) -> dict[str, str]:
        await session.execute(text("SELECT 1"))
        return {"status": "ok"}

    return app


def run() -> None:
    settings = get_settings()
    configure_logging(SERVICE, settings.log_level, settings.log_json)
    uvicorn.run(create_app(settings), host=settings.gateway_host, port=settings.gateway_port, log_level="warning")


if __name__ == "__main__":
    run()
