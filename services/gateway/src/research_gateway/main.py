"""Gateway service: the HTTP API (FastAPI), wired from what `bootstrap(settings)` builds (the key
check, the allowed hosts, the console's and edge's groups).

Builds the engine, session factory and broker in the lifespan and mounts the routers:
`tasks` (idempotent submission, task and claim reads), `search` (the local corpus),
`records` (findings, audit log, SSE events), `work` (a key's own questions and reports),
`papers` (a paper's card and the reports citing it), `admin` (operator verbs, admin role) and `accounts`
(a key's own limits and use, the admin's per-key quotas and workspaces). Routes
live under `/api/research/v1`; the OpenAPI document is at `/openapi.json`.

Every API route needs a key (`auth.require`); only `/healthz`, `/metrics` and the OpenAPI
document answer without one (they hold no ledger data). Open mode (`GATEWAY_AUTH__OPEN=true`)
is refused on a non-loopback bind and announced in the log at start. Every request names an
allowed `Host` and, when it carries one, the gateway's own `Origin` (`hosts.HostGuard`), then
passes the edge's limits (`limits.py`): a body cap, the key check before a keyless body is read,
and a cap on the event streams one key holds open.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI, Request

from research_gateway import (
    accounts,
    admin,
    claims,
    console,
    edge,
    papers,
    records,
    reports,
    reviews,
    runs,
    search,
    source_lists,
    tasks,
    verifications,
    work,
)
from research_gateway.bootstrap import bootstrap
from research_gateway.bus import build_bus
from research_gateway.deps import SERVICE
from research_gateway.edge import QuietFailures
from research_gateway.hosts import HostGuard
from research_gateway.limits import BodyCap, KeyFirst, StreamCap
from research_gateway.mcp import install as install_mcp
from research_gateway.observability import instrument, serve_metrics
from research_gateway.settings import GatewaySettings
from research_ledger.outbox import broker_relay
from research_platform import metrics
from research_platform.broker import ensure_streams_at
from research_platform.db import create_engine, create_read_engine, dispose, ping, session_factory
from research_platform.logging import configure_logging, get_logger
from research_platform.settings import Settings

log = get_logger(__name__)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The gateway app; `settings` may be the shared root (the console and edge groups then take
    their defaults)."""
    settings = settings or GatewaySettings()
    deps = bootstrap(settings)
    guard = deps.guard

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if guard.open:
            log.warning(
                "OPEN MODE: API routes answer without a key (GATEWAY_AUTH__OPEN=true), loopback only",
                host=settings.gateway_host,
            )
        await ensure_streams_at(settings.require_nats_url(), settings)
        engine = create_engine(settings.require_database_url())
        reader = create_read_engine(settings.database_read_url, engine)  # GET routes that only read
        bus = build_bus(
            settings.require_nats_url()
        )  # the declared publishers (docs/asyncapi/gateway.json)
        broker = bus.broker
        metrics.instrument(broker, SERVICE)  # publishes counted like every service's
        await broker.connect()
        app.state.sessions, app.state.broker, app.state.bus = session_factory(engine), broker, bus
        app.state.read_sessions = session_factory(reader)
        # The mode commands the routes stage with their reports, published after each commit;
        # it drains first what an earlier gateway committed and could not publish.
        async with broker_relay(app.state.sessions, broker, ready=lambda: True).running():
            yield
        await broker.stop()
        await dispose(engine, reader)

    app = FastAPI(title="research-engine", version="0.1.0", lifespan=lifespan)
    app.state.guard = guard
    app.state.auth_settings = settings.gateway_auth  # the console's sign-in codes and sessions
    app.state.limits = settings.gateway_limits  # per-key quotas and workspaces (`quotas.py`)
    app.state.grafana_url = deps.console.grafana_url  # the Operate page's dashboard links
    app.state.edge = deps.edge  # the stream lifetime and the export time cap, read per request
    edge.install(app)  # exact 400 / 405 / 422 answers, documented
    for module in (
        accounts,
        tasks,
        search,
        records,
        admin,
        source_lists,
        claims,
        reports,
        reviews,
        verifications,
        work,
        papers,
    ):
        app.include_router(module.router)
    app.include_router(runs.router(app))
    app.include_router(console.router)  # the web console at / (HTML shells over this API)
    app.mount("/static/console", console.pages.static, name="console-static")
    install_mcp(
        app, deps.allowed.transport_security()
    )  # MCP (streamable HTTP) at /mcp, behind the same keys
    app.add_middleware(KeyFirst, guard=guard)
    app.add_middleware(StreamCap, per_key=deps.edge.streams_per_key)
    app.add_middleware(BodyCap, max_bytes=deps.edge.max_body_bytes)
    instrument(app)  # HTTP metrics (instrumentator) and /metrics: the limits' answers counted too
    app.add_middleware(HostGuard, allowed=deps.allowed)  # before any route, metrics included
    app.add_middleware(
        QuietFailures
    )  # outermost: no error message, which may quote a request, logged

    @app.get("/healthz")
    async def healthz(request: Request) -> dict[str, str]:
        await ping(request.app.state.sessions)
        return {"status": "ok"}

    return app


def run() -> None:
    settings = GatewaySettings()
    configure_logging(SERVICE, settings.log_level, settings.log_json)
    serve_metrics(settings)
    uvicorn.run(
        create_app(settings),
        host=settings.gateway_host,
        port=settings.gateway_port,
        log_level="warning",
    )


if __name__ == "__main__":
    run()
