"""The composition root every periodic agent shares: broker, engine, scheduler and control verbs.

An agent service only says how to build its run function and which events it emits;
`periodic_app` wires the rest, so the three agents start, answer
`research.control.<agent>.<verb>` and shut down the same way, and each one's AsyncAPI document
lists what it publishes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from faststream import FastStream
from faststream.nats import NatsBroker
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from research_agents.controls import mount_controls
from research_agents.scheduler import RunContext, Scheduler, ScheduleSettings
from research_platform.broker import Emits, declare_publishers, ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory
from research_platform.settings import Settings

RunFunction = Callable[[RunContext], Awaitable[Any]]


@dataclass(frozen=True)
class AgentResources:
    """What the lifespan built; an agent's run function takes the parts it needs."""

    broker: NatsBroker
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    publishers: Mapping[str, Any] = field(
        default_factory=dict
    )  # subject → declared publisher of an emitted event


BuildRun = Callable[[AgentResources], RunFunction]


def periodic_app(
    agent: str,
    settings: Settings,
    schedule: ScheduleSettings,
    build_run: BuildRun,
    emits: tuple[Emits, ...] = (),
) -> FastStream:
    """A FastStream app running `agent` on its schedule; `build_run` is called once in the lifespan
    and gets a declared publisher for each of `emits`."""
    broker = make_broker(settings.require_nats_url(), agent)
    publishers = declare_publishers(broker, emits)
    state: dict[str, Scheduler] = {}

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        run = build_run(AgentResources(broker, engine, session_factory(engine), publishers))
        scheduler = Scheduler(agent, engine, run, schedule)
        state["scheduler"] = scheduler
        scheduler.start()
        yield
        await scheduler.stop()
        await engine.dispose()

    mount_controls(broker, agent, lambda: state["scheduler"])
    return FastStream(broker, lifespan=lifespan)
