"""One builder for a mode service's FastStream app: the broker, `Delivery` (ack / retry / dead
letter + audit), the lifespan (streams, database, dead-letter recorder), the durable pull
subscriber of the mode's requests and a declared publisher for every event the mode emits (so the
service's AsyncAPI lists what it publishes, with the payload schema, next to what it consumes). The mode supplies only what is its own: `build`, an async
context manager that makes the service object (anything with `handle(command)`) and holds
whatever runs beside it (a sweep ticker, a scheduler) for the app's lifetime.
"""

# No `from __future__ import annotations` here: the request handler's annotation must be the
# command class itself, evaluated when the handler is made, for FastStream to parse and document it.

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, NatsBroker, PullSub
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from research_ledger import dead_letters
from research_platform.broker import Emits, declare_publishers, ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory
from research_platform.delivery import Delivery
from research_platform.logging import get_logger
from research_runs import RUN_EVENTS_ADDRESS, RunRecorder, declare_run_events

log = get_logger(__name__)


@dataclass(frozen=True)
class Requests:
    """The mode's request subscriber (a durable pull consumer on its JetStream stream)."""

    subject: str
    stream: str
    durable: str
    command: type[BaseModel]
    handler: str  # the handler's name (AsyncAPI, logs)
    title: str
    description: str
    summary: str  # the handler's docstring
    batch_size: int = 1


@dataclass
class ModeContext:
    """What `build` gets, and what other subscribers of the same app may use once it started."""

    broker: NatsBroker
    settings: Any
    engine: AsyncEngine | None = None
    sessions: async_sessionmaker[AsyncSession] | None = None
    service: Any = None
    publishers: dict[str, Any] = field(
        default_factory=dict
    )  # subject → declared FastStream publisher


Build = Callable[[ModeContext], AbstractAsyncContextManager[Any]]


def mode_app(
    settings: Any, service: str, requests: Requests, build: Build, emits: tuple[Emits, ...] = ()
) -> tuple[FastStream, ModeContext]:
    """The app of one mode service and its context (for `build` and the mode's extra subscribers)."""
    broker = make_broker(settings.require_nats_url(), service)
    delivery = Delivery.install(
        broker, service=service, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s
    )
    ctx = ModeContext(broker, settings)
    ctx.publishers.update(declare_publishers(broker, emits))
    # Every mode traces its runs: the run events are declared too (a recorder given this publisher sends through it).
    ctx.publishers[RUN_EVENTS_ADDRESS] = declare_run_events(broker, service)

    async def tell_run(run_id: str, reason: str) -> None:
        """A dead-lettered request's run ends on its event stream too: `error` with the reason, `done(failed)`."""
        try:
            recorder = await RunRecorder.resume(
                broker.connection.jetstream(), run_id, agent=service
            )
            await recorder.error(reason)
            await recorder.done(status="failed")
        except Exception as exc:  # noqa: BLE001 - the report already reads failed; the events are the echo
            log.warning(
                "run events of a dead-lettered request not written", run_id=run_id, error=repr(exc)
            )

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = ctx.engine = create_engine(settings.require_database_url())
        ctx.sessions = session_factory(engine)
        delivery.record = dead_letters.recorder(ctx.sessions, service, tell_run=tell_run)
        try:
            async with build(ctx) as made:
                ctx.service = made
                yield
        finally:
            await engine.dispose()

    command_type = requests.command

    async def on_request(command: command_type) -> None:  # type: ignore[valid-type]  # the mode's command model, a runtime type FastStream reads
        await ctx.service.handle(command)

    on_request.__name__ = on_request.__qualname__ = requests.handler
    on_request.__doc__ = requests.summary
    broker.subscriber(
        requests.subject,
        stream=JStream(requests.stream, declare=False),
        durable=requests.durable,
        config=ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver),
        pull_sub=PullSub(batch_size=requests.batch_size, timeout=2.0),
        ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
        title=requests.title,
        description=requests.description,
    )(on_request)
    return FastStream(broker, lifespan=lifespan), ctx
