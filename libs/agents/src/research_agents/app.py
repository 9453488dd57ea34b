"""A periodic agent beside a service: its scheduler and its control verbs.

A service is wired by `research_platform.app.service_app`, periodic agents included; `schedule`
adds what makes it an agent, the same way for the three agents and the scout:

    app, ctx = service_app(settings, SERVICE)
    schedule(ctx, settings.librarian.schedule, lambda ctx: Librarian(ctx.engine, ...).run)

The scheduler (`Scheduler`, run-lock across replicas) starts once the service is built and stops
before it is torn down; `research.control.<agent>.<verb>` is answered (`mount_controls`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from research_agents.controls import mount_controls
from research_agents.scheduler import RunContext, Scheduler, ScheduleSettings
from research_platform.app import ServiceContext

RunFunction = Callable[[RunContext], Awaitable[Any]]
MakeRun = Callable[[ServiceContext[Any, Any]], RunFunction]


def schedule(ctx: ServiceContext[Any, Any], settings: ScheduleSettings, make_run: MakeRun) -> None:
    """Run agent `ctx.name` on `settings` for the app's lifetime; `make_run(ctx)` is called once
    the service is built (`ctx.engine`, `ctx.sessions`, `ctx.publishers`, `ctx.service` are set)."""
    running: list[Scheduler] = []
    mount_controls(ctx.broker, ctx.name, lambda: running[0])

    @asynccontextmanager
    async def scheduled(ctx: ServiceContext[Any, Any]) -> AsyncIterator[None]:
        scheduler = Scheduler(ctx.name, ctx.engine, make_run(ctx), settings)
        running[:] = [scheduler]
        scheduler.start()
        try:
            yield
        finally:
            await scheduler.stop()

    ctx.run_beside(scheduled)
