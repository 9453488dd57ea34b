"""Scout service: builds source lists (seeds 002 + 004) and keeps scheduled ones fresh.

Subscribers:
- `research.sourcelist.requested` — durable pull consumer `scout-requests` (stream
  `RESEARCH_SOURCELISTS`): a `RequestSourceList` JSON builds one run of a list. The gateway's
  `POST /source-lists` publishes the same command; publishing it directly is supported.
- its schedule tick (`research_agents.Scheduler`, agent `scout`, run-lock across replicas) fires
  due schedules; operator verbs on `research.control.scout.<verb>` (status, run-once, pause…).

Publishes `research.sourcelist.updated` (`SourceListUpdated`, with the diff) after every run.
Engine: `SCOUT__ENGINE` (`offline` by default; `llm` takes a remote model when `LLM__…` configures
one, `research_llm.choose_engine`). The broker, delivery (ack / retry / dead letter + audit),
lifespan and declared publishers are `research_platform.app.service_app`'s, the schedule and its
controls `research_agents.app.schedule`'s; the connector client is `research_modes.ConnectorClient`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream

from research_agents.app import schedule
from research_contracts import subjects
from research_contracts.sourcelists import RequestSourceList, SourceListUpdated
from research_ledger import Ledger
from research_modes import ConnectorClient
from research_modes.app import mode_app
from research_platform.app import Consumes, ServiceContext
from research_platform.broker import Emits
from research_platform.service import run_service
from research_scout.bootstrap import bootstrap
from research_scout.pipeline import Scout
from research_scout.repository import SERVICE
from research_scout.schedules import ScheduleTick
from research_scout.settings import ScoutServiceSettings

EMITS = (
    Emits(
        subjects.SOURCELIST_UPDATED,
        subjects.SOURCELISTS_STREAM,
        SourceListUpdated,
        "scout.sourcelist_updated",
        "After every run of a list: its new version, the number of sources and the diff to the "
        "previous version (`Nats-Msg-Id` per run).",
    ),
)


def create_app(settings: ScoutServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    scout_settings = settings.scout

    @asynccontextmanager
    async def build(ctx: ServiceContext[ScoutServiceSettings, Scout]) -> AsyncIterator[Scout]:
        broker = ctx.broker

        yield Scout(
            ledger=Ledger(ctx.sessions),
            settings=scout_settings,
            search=ConnectorClient(
                lambda: broker.connection, timeout_s=scout_settings.connector_timeout_s
            ).search,
            jetstream=lambda: broker.connection.jetstream(),  # noqa: PLW0108 - the broker connects after this is built; `connection` raises until then
            chain=deps.llm.choose(
                remote=lambda chain: chain,
                offline=lambda: None,
            ),
            run_events=ctx.run_events,
        )

    app, ctx = mode_app(
        settings,
        SERVICE,
        build,
        emits=EMITS,
        requests=Consumes(
            subjects.SOURCELIST_REQUESTED,
            subjects.SOURCELISTS_STREAM,
            subjects.SCOUT_REQUESTS_DURABLE,
            title="scout.requests",
            description=(
                f"Source-list requests: publish a RequestSourceList JSON on `{subjects.SOURCELIST_REQUESTED}` (stream "
                f"{subjects.SOURCELISTS_STREAM}; set `Nats-Msg-Id`). Bad input is dead-lettered to "
                "`research.deadletter.<subject>`; the list's snapshot and diff follow on "
                f"`{subjects.SOURCELIST_UPDATED}`."
            ),
        ),
        command=RequestSourceList,
    )

    schedule(ctx, scout_settings.schedule, lambda ctx: ScheduleTick(ctx.service).fire_due)
    return app


def run() -> None:
    run_service(SERVICE, create_app, ScoutServiceSettings)


if __name__ == "__main__":
    run()
