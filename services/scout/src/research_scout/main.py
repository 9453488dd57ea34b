"""Scout service: builds source lists (seeds 002 + 004) and keeps scheduled ones fresh.

Subscribers:
- `research.sourcelist.requested` — durable pull consumer `scout-requests` (stream
  `RESEARCH_SOURCELISTS`): a `RequestSourceList` JSON builds one run of a list. The gateway's
  `POST /source-lists` publishes the same command; publishing it directly is supported.
- its schedule tick (`research_agents.Scheduler`, agent `scout`, run-lock across replicas) fires
  due schedules; operator verbs on `research.control.scout.<verb>` (status, run-once, pause…).

Publishes `research.sourcelist.updated` (`SourceListUpdated`, with the diff) after every run.
Acknowledging, retrying and dead-lettering is `research_platform.delivery.Delivery`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, PullSub

from research_agents import Scheduler, mount_controls
from research_contracts import subjects
from research_contracts.sourcelists import RequestSourceList, SourceListUpdated
from research_ledger import dead_letters
from research_llm import build_chain
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory
from research_platform.delivery import Delivery
from research_platform.service import run_service
from research_modes import ConnectorClient
from research_scout.pipeline import Scout
from research_scout.repository import SERVICE
from research_scout.schedules import ScheduleTick
from research_scout.settings import ScoutServiceSettings


def create_app(settings: ScoutServiceSettings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    delivery = Delivery.install(broker, service=SERVICE, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s)
    state: dict[str, Any] = {}
    scout_settings = settings.scout

    async def publish(event: SourceListUpdated) -> None:
        await broker.publish(event, subjects.SOURCELIST_UPDATED, stream=subjects.SOURCELISTS_STREAM,
                             headers={subjects.MSG_ID_HEADER: f"sourcelist-updated-{event.run_id}"})

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        sessions = session_factory(engine)
        delivery.record = dead_letters.recorder(sessions, SERVICE)
        scout = Scout(
            sessions=sessions,
            settings=scout_settings,
            search=ConnectorClient(lambda: broker.connection, timeout_s=scout_settings.connector_timeout_s).search,
            publish=publish,
            jetstream=lambda: broker.connection.jetstream(),
            chain=build_chain(settings.llm) if scout_settings.engine == "llm" else None,
        )
        scheduler = Scheduler(SERVICE, engine, ScheduleTick(scout).fire_due, scout_settings.schedule)
        state.update(scout=scout, scheduler=scheduler)
        scheduler.start()
        yield
        await scheduler.stop()
        await engine.dispose()

    @broker.subscriber(
        subjects.SOURCELIST_REQUESTED,
        stream=JStream(subjects.SOURCELISTS_STREAM, declare=False),
        durable=subjects.SCOUT_REQUESTS_DURABLE,
        config=ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver),
        pull_sub=PullSub(batch_size=1, timeout=2.0),
        ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
        title="scout.requests",
        description=(
            f"Source-list requests: publish a RequestSourceList JSON on `{subjects.SOURCELIST_REQUESTED}` (stream "
            f"{subjects.SOURCELISTS_STREAM}; set `Nats-Msg-Id`). Bad input is dead-lettered to "
            "`research.deadletter.<subject>`; the list's snapshot and diff follow on "
            f"`{subjects.SOURCELIST_UPDATED}`."
        ),
    )
    async def on_request(request: RequestSourceList) -> None:
        """Build one run of a source list (clamped to its workspace's limits)."""
        await state["scout"].handle(request)

    mount_controls(broker, SERVICE, lambda: state["scheduler"])
    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app, ScoutServiceSettings)


if __name__ == "__main__":
    run()
