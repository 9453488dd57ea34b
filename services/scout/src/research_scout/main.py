"""Scout service: builds source lists (seeds 002 + 004) and keeps scheduled ones fresh.

Subscribers:
- `research.sourcelist.requested` — durable pull consumer `scout-requests` (stream
  `RESEARCH_SOURCELISTS`): a `RequestSourceList` JSON builds one run of a list. The gateway's
  `POST /source-lists` publishes the same command; publishing it directly is supported.
- its schedule tick (`research_agents.Scheduler`, agent `scout`, run-lock across replicas) fires
  due schedules; operator verbs on `research.control.scout.<verb>` (status, run-once, pause…).

Publishes `research.sourcelist.updated` (`SourceListUpdated`, with the diff) after every run.
The broker, delivery (ack / retry / dead letter + audit), lifespan and request subscriber are
`research_modes.app.mode_app`'s; the connector client is `research_modes.ConnectorClient`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream

from research_agents import Scheduler, mount_controls
from research_contracts import subjects
from research_contracts.sourcelists import RequestSourceList, SourceListUpdated
from research_llm import build_chain
from research_modes import ConnectorClient
from research_modes.app import ModeContext, Requests, mode_app
from research_platform.broker import Emits
from research_platform.service import run_service
from research_scout.pipeline import Scout
from research_scout.repository import SERVICE
from research_scout.schedules import ScheduleTick
from research_scout.settings import ScoutServiceSettings


def create_app(settings: ScoutServiceSettings) -> FastStream:
    scout_settings = settings.scout
    schedulers: list[Scheduler] = []

    @asynccontextmanager
    async def build(ctx: ModeContext) -> AsyncIterator[Scout]:
        assert ctx.sessions is not None and ctx.engine is not None
        broker = ctx.broker

        async def publish(event: SourceListUpdated) -> None:
            await ctx.publishers[subjects.SOURCELIST_UPDATED].publish(
                event, headers={subjects.MSG_ID_HEADER: f"sourcelist-updated-{event.run_id}"}
            )

        scout = Scout(
            sessions=ctx.sessions,
            settings=scout_settings,
            search=ConnectorClient(
                lambda: broker.connection, timeout_s=scout_settings.connector_timeout_s
            ).search,
            publish=publish,
            jetstream=lambda: broker.connection.jetstream(),
            chain=build_chain(settings.llm) if scout_settings.engine == "llm" else None,
        )
        scheduler = Scheduler(
            SERVICE, ctx.engine, ScheduleTick(scout).fire_due, scout_settings.schedule
        )
        schedulers[:] = [scheduler]
        scheduler.start()
        try:
            yield scout
        finally:
            await scheduler.stop()

    app, ctx = mode_app(
        settings,
        SERVICE,
        Requests(
            subject=subjects.SOURCELIST_REQUESTED,
            stream=subjects.SOURCELISTS_STREAM,
            durable=subjects.SCOUT_REQUESTS_DURABLE,
            command=RequestSourceList,
            handler="on_request",
            title="scout.requests",
            batch_size=1,
            description=(
                f"Source-list requests: publish a RequestSourceList JSON on `{subjects.SOURCELIST_REQUESTED}` (stream "
                f"{subjects.SOURCELISTS_STREAM}; set `Nats-Msg-Id`). Bad input is dead-lettered to "
                "`research.deadletter.<subject>`; the list's snapshot and diff follow on "
                f"`{subjects.SOURCELIST_UPDATED}`."
            ),
            summary="Build one run of a source list (clamped to its workspace's limits).",
        ),
        build,
        emits=(
            Emits(
                subjects.SOURCELIST_UPDATED,
                subjects.SOURCELISTS_STREAM,
                SourceListUpdated,
                "scout.sourcelist_updated",
                "After every run of a list: its new version, the number of sources and the diff to the "
                "previous version (`Nats-Msg-Id` per run).",
            ),
        ),
    )
    mount_controls(ctx.broker, SERVICE, lambda: schedulers[0])
    return app


def run() -> None:
    run_service(SERVICE, create_app, ScoutServiceSettings)


if __name__ == "__main__":
    run()
