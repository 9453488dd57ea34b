"""The one way a service is wired: `service_app` builds its FastStream app.

    app, ctx = service_app(settings, SERVICE, build, emits=EMITS, dead_letters=dead_letters.recorder)

    @ctx.consume(Consumes(subjects.X, subjects.X_STREAM, "x-durable", "svc.x", "What arrives on X."))
    async def on_x(command: DoX) -> None:
        await ctx.service.handle(command)

It makes the broker; with `dead_letters` it installs `Delivery` (ack / retry / dead letter +
audit, the one policy every JetStream consumer runs behind) and binds the ledger's recorder in
the lifespan (the platform cannot import the ledger: the service hands `research_ledger.
dead_letters.recorder` in). It declares a publisher for every event the service emits (`emits`)
and, with `run_events=True`, the run events (`research.run.{run_id}.event`), so the service's
AsyncAPI lists what it publishes with the payload schema next to what it consumes. The lifespan
ensures the streams (unless `streams=False`), opens the database (`Pool`: size, pre-ping, a read
engine) and enters `build(ctx)`, an async context manager that makes the service object (kept as
`ctx.service`) and holds whatever runs beside it (a sweep ticker) for the app's lifetime; parts
added with `ctx.run_beside` (a periodic agent's scheduler, `research_agents.schedule`) are
entered after it. `ctx.consume` declares a durable pull subscriber settled by `Delivery`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    nullcontext,
)
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast, overload

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, NatsBroker, PullSub
from nats.js.api import DeliverPolicy
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from research_platform.broker import Emits, declare_publishers, ensure_streams_at, make_broker
from research_platform.db import create_engine, create_read_engine, dispose, session_factory
from research_platform.delivery import Delivery, Recorder
from research_platform.logging import get_logger
from research_platform.settings import Settings
from research_runs import RUN_EVENTS_ADDRESS, RunRecorder, declare_run_events

log = get_logger(__name__)

H = TypeVar("H", bound=Callable[..., Any])
S = TypeVar("S", bound=Settings)  # the service's root settings
T = TypeVar("T")  # the service object `build` makes
_UNBUILT: Any = object()
RunTeller = Callable[[str, str], Any]  # (run_id, reason) → awaitable: the run's events end failed
# `research_ledger.dead_letters.recorder`: (sessions, service, *, tell_run) → the Delivery recorder
DeadLetters = Callable[..., Recorder]


@dataclass(frozen=True)
class Pool:
    """The service's database pool: `size` connections (≥ the messages worked on at once),
    pre-ping (off for the per-message consumers, see `db.create_engine`), and whether a read
    engine (`DATABASE_READ_URL`, else the primary) is opened beside it."""

    size: int = 5
    pre_ping: bool = True
    reader: bool = False


@dataclass(frozen=True)
class Consumes:
    """A durable pull subscriber on a JetStream stream, settled by `Delivery`."""

    subject: str
    stream: str
    durable: str
    title: str
    description: str
    batch_size: int = 1
    max_workers: int | None = None  # FastStream's default (one at a time) when None
    deliver_policy: DeliverPolicy | None = None  # None: all (a new durable reads the stream)


@dataclass(frozen=True)
class _Database:
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    reader: AsyncEngine | None


@dataclass
class ServiceContext(Generic[S, T]):
    """What `build` gets; the service's subscribers use it once the app started. Typed by the
    service's settings root `S` and the service object `T` its `build` makes (`ctx.service`)."""

    name: str
    broker: NatsBroker
    settings: S
    delivery: Delivery | None = None
    publishers: dict[str, Any] = field(default_factory=dict)  # subject → declared publisher
    run_events: Any = None  # the declared run-event publisher (`run_events=True`)
    opened: _Database | None = None  # set in the lifespan, before `build`
    built: Any = field(default=_UNBUILT, repr=False)  # what `build` yielded (`service`)
    beside: list[Part] = field(default_factory=list)  # entered after `build`, left before it

    @property
    def service(self) -> T:
        """What `build` yielded: set in the lifespan, before the first message arrives."""
        if self.built is _UNBUILT:
            raise RuntimeError(f"{self.name}: the service is built in the app's lifespan")
        return cast(T, self.built)

    def run_beside(self, part: Part) -> None:
        """Hold `part(ctx)` open beside the service for the app's lifetime (a scheduler)."""
        self.beside.append(part)

    @property
    def engine(self) -> AsyncEngine:
        return self._database().engine

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        return self._database().sessions

    @property
    def reader(self) -> AsyncEngine:
        """The read engine (`DATABASE_READ_URL`, else the primary); `Pool(reader=True)`."""
        reader = self._database().reader
        if reader is None:
            raise RuntimeError(f"{self.name}: no read engine (`Pool(reader=True)`)")
        return reader

    def _database(self) -> _Database:
        if self.opened is None:
            raise RuntimeError(f"{self.name}: the database opens in the app's lifespan")
        return self.opened

    async def recorder(self, run_id: str, **kwargs: Any) -> RunRecorder:
        """A recorder resumed on `run_id`'s events, publishing through the declared publisher."""
        return await RunRecorder.resume(
            self.broker.connection.jetstream(), run_id, publisher=self.run_events, **kwargs
        )

    def consume(self, consumes: Consumes) -> Callable[[H], H]:
        """Declare `consumes` with the decorated handler (its annotation is the message type)."""
        if self.delivery is None:
            raise RuntimeError(f"{self.name}: a JetStream consumer needs `dead_letters=`")
        config = ConsumerConfig(
            ack_wait=self.settings.ack_wait_s, max_deliver=self.settings.max_deliver
        )
        if consumes.deliver_policy is not None:
            config.deliver_policy = consumes.deliver_policy

        def declare(handler: H) -> H:
            self.broker.subscriber(
                consumes.subject,
                stream=JStream(consumes.stream, declare=False),
                durable=consumes.durable,
                config=config,
                pull_sub=PullSub(batch_size=consumes.batch_size, timeout=2.0),
                ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
                title=consumes.title,
                description=consumes.description,
                max_workers=consumes.max_workers,
            )(handler)
            return handler

        return declare


# `build(ctx)`: the service object for the app's lifetime; a part run beside it (a scheduler).
Build = Callable[[ServiceContext[S, T]], AbstractAsyncContextManager[T]]
Part = Callable[[ServiceContext[Any, Any]], AbstractAsyncContextManager[Any]]


@overload
def service_app(
    settings: S,
    name: str,
    build: None = None,
    *,
    emits: tuple[Emits, ...] = (),
    run_events: bool = False,
    dead_letters: DeadLetters | None = None,
    pool: Pool = Pool(),
    streams: bool = True,
) -> tuple[FastStream, ServiceContext[S, None]]: ...


@overload
def service_app(
    settings: S,
    name: str,
    build: Build[S, T],
    *,
    emits: tuple[Emits, ...] = (),
    run_events: bool = False,
    dead_letters: DeadLetters | None = None,
    pool: Pool = Pool(),
    streams: bool = True,
) -> tuple[FastStream, ServiceContext[S, T]]: ...


def service_app(
    settings: S,
    name: str,
    build: Build[S, T] | None = None,
    *,
    emits: tuple[Emits, ...] = (),
    run_events: bool = False,
    dead_letters: DeadLetters | None = None,
    pool: Pool = Pool(),
    streams: bool = True,
) -> tuple[FastStream, ServiceContext[S, T]]:
    """The app of service `name` and its context (see the module docstring)."""
    broker = make_broker(settings.require_nats_url(), name)
    ctx: ServiceContext[S, T] = ServiceContext(name, broker, settings)
    if dead_letters is not None:
        ctx.delivery = Delivery.install(
            broker, service=name, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s
        )
    ctx.publishers.update(declare_publishers(broker, emits))
    if run_events:
        ctx.run_events = ctx.publishers[RUN_EVENTS_ADDRESS] = declare_run_events(broker, name)

    async def tell_run(run_id: str, reason: str) -> None:
        """A dead-lettered request's run ends on its event stream too: `error` with the reason, `done(failed)`."""
        try:
            recorder = await ctx.recorder(run_id, agent=name)
            await recorder.error(reason)
            await recorder.done(status="failed")
        except Exception as exc:  # noqa: BLE001 - the report already reads failed; the events are the echo
            log.warning(
                "run events of a dead-lettered request not written", run_id=run_id, error=repr(exc)
            )

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        if streams:
            await ensure_streams_at(settings.require_nats_url(), settings)
        engine = create_engine(
            settings.require_database_url(), pool_size=pool.size, pre_ping=pool.pre_ping
        )
        reader = (
            create_read_engine(settings.database_read_url, engine, pool_size=pool.size)
            if pool.reader
            else None
        )
        ctx.opened = _Database(engine, session_factory(engine), reader)
        if ctx.delivery is not None and dead_letters is not None:
            ctx.delivery.record = dead_letters(
                ctx.sessions, name, **({"tell_run": tell_run} if run_events else {})
            )
        try:
            async with (
                build(ctx) if build is not None else nullcontext() as made,
                AsyncExitStack() as parts,
            ):
                ctx.built = made
                for part in ctx.beside:
                    await parts.enter_async_context(part(ctx))
                yield
        finally:
            await dispose(*(e for e in (engine, reader) if e is not None))

    return FastStream(broker, lifespan=lifespan), ctx
