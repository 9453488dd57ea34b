"""The outbox: an event a change must publish is written in the change's own transaction, and
published after the commit by a relay.

    ledger.outbox.add(subjects.VERIFICATION_CHANGED, event, msg_id=f"verification-changed-{run_id}")
    # ... the transaction commits: the change and its event together, or neither

    ctx.run_beside(relay_beside)     # a service's main.py: its relay, draining from the start

A committed transaction that staged an event wakes every relay of the process (`after_commit`),
so the event leaves as soon as the change is durable; a relay also drains when it starts and on
a slow poll, so an event whose process died between the commit and the publish goes out when any
relay runs again. Publishing is at least once: a relay that dies after the publish and before it
marks the row publishes it again, with the same `Nats-Msg-Id` (the event's own id, else
`outbox-<row id>`), and JetStream stores the repeat once within the stream's duplicate window;
every consumer is idempotent besides. Rows are claimed with `FOR UPDATE SKIP LOCKED`, so relays
in several processes never publish the same row at once; a published row is purged a day later.
Run events are not state and never pass through here: they are a live trace, published directly
(`research_runs`).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel
from sqlalchemy import BigInteger, DateTime, Index, String, Text, delete, event, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, Session, mapped_column

from research_contracts import subjects
from research_platform.db import transaction
from research_platform.logging import get_logger
from research_platform.tables import Base

log = get_logger(__name__)

# (subject, body, headers) → the JetStream acknowledgement; raises when the stream refused it.
Publish = Callable[[str, bytes, dict[str, str]], Awaitable[Any]]

READY_POLL_S = 0.1  # seconds between looks at whether the bus is connected, at start
KEPT_PUBLISHED = timedelta(days=1)  # a published row is kept this long, then purged
PURGE_EVERY_S = 3600.0
_STAGED = "outbox_staged"  # `Session.info` key: this transaction wrote an outbox row
_relays: weakref.WeakSet[OutboxRelay] = weakref.WeakSet()  # the relays of this process


class OutboxEvent(Base):
    """An event to publish once its transaction has committed; `published_at` once JetStream
    acknowledged it."""

    __tablename__ = "outbox_events"
    __table_args__ = (
        Index(
            "ix_outbox_events_unpublished",
            "id",
            postgresql_where=text("published_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)  # the event as JSON, as its consumers read it
    msg_id: Mapped[str | None] = mapped_column(String(300))
    service: Mapped[str] = mapped_column(String(50))
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), nullable=False
    )
    published_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    def dedup_id(self) -> str:
        """The `Nats-Msg-Id` of every publish of this row: the event's own, else the row's."""
        return self.msg_id or f"outbox-{self.id}"


class Outbox:
    """Stages events in the caller's transaction; the ledger never publishes."""

    def __init__(self, session: AsyncSession, *, service: str) -> None:
        self.session = session
        self.service = service

    def add(self, subject: str, event: BaseModel, *, msg_id: str | None = None) -> OutboxEvent:
        """Stage `event` for `subject`; `msg_id` is its de-duplication id when it has a natural
        one (a retried change then dedupes across transactions too), else the row id is used."""
        row = OutboxEvent(
            subject=subject, body=event.model_dump_json(), msg_id=msg_id, service=self.service
        )
        self.session.add(row)
        self.session.sync_session.info[_STAGED] = True
        return row


@event.listens_for(Session, "after_commit")
def _wake_relays(session: Session) -> None:
    """A commit that staged events wakes the process's relays (they publish after the commit)."""
    if session.info.pop(_STAGED, False):
        for relay in list(_relays):
            relay.wake()


@event.listens_for(Session, "after_rollback")
def _forget_staged(session: Session) -> None:
    session.info.pop(_STAGED, None)


class OutboxRelay:
    """Publishes the committed, unpublished outbox rows in order and marks them published."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        publish: Publish,
        *,
        ready: Callable[[], bool] = lambda: True,
        batch: int = 100,
        poll_s: float = 5.0,
    ) -> None:
        self.sessions = sessions
        self.publish = publish
        self.ready = ready  # whether the bus is connected: the relay starts draining once it is
        self.batch = batch
        self.poll_s = poll_s
        self._wake = asyncio.Event()
        self.published = 0  # rows this relay published (a repeat JetStream dropped included)

    def wake(self) -> None:
        self._wake.set()

    async def drain(self) -> int:
        """Publish every unpublished row (oldest first), a batch per transaction; the number
        published. A refused publish rolls its batch back: those rows are published again later,
        with the same `Nats-Msg-Id`."""
        drained = 0
        while True:
            async with transaction(self.sessions) as session:
                rows = (
                    await session.scalars(
                        select(OutboxEvent)
                        .where(OutboxEvent.published_at.is_(None))
                        .order_by(OutboxEvent.id)
                        .limit(self.batch)
                        .with_for_update(skip_locked=True)
                    )
                ).all()
                for row in rows:
                    await self.publish(
                        row.subject,
                        row.body.encode(),
                        {
                            subjects.MSG_ID_HEADER: row.dedup_id(),
                            "content-type": "application/json",
                        },
                    )
                    row.published_at = func.now()
            drained += len(rows)
            self.published += len(rows)
            if len(rows) < self.batch:
                return drained

    async def purge(self) -> int:
        """Delete the rows published more than `KEPT_PUBLISHED` ago (a repeat of theirs would be
        past JetStream's duplicate window anyway); how many."""
        async with transaction(self.sessions) as session:
            result = await session.execute(
                delete(OutboxEvent).where(OutboxEvent.published_at < func.now() - KEPT_PUBLISHED)
            )
        return int(getattr(result, "rowcount", 0) or 0)

    async def run(self) -> None:
        """Drain now, then whenever a commit staged an event, and every `poll_s` besides (an
        event another process committed and could not publish), once `ready()`; purges the
        rows published long ago every `PURGE_EVERY_S`."""
        while not self.ready():
            await asyncio.sleep(READY_POLL_S)
        purge_at = time.monotonic()
        while True:
            self._wake.clear()
            try:
                await self.drain()
                if time.monotonic() >= purge_at:
                    await self.purge()
                    purge_at = time.monotonic() + PURGE_EVERY_S
            except Exception as exc:  # noqa: BLE001 - the bus or the database is down: rows wait
                log.warning("outbox not drained; retrying", error=repr(exc))
            with suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[OutboxRelay]:
        """Run the relay beside the caller (registered to be woken by commits) until it leaves."""
        _relays.add(self)
        task = asyncio.create_task(self.run(), name="outbox-relay")
        try:
            yield self
        finally:
            _relays.discard(self)
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task


def broker_relay(
    sessions: async_sessionmaker[AsyncSession],
    broker: Any,
    *,
    ready: Callable[[], bool] | None = None,
) -> OutboxRelay:
    """A relay publishing through a FastStream NATS broker's JetStream context, each publish
    waiting for the stream's acknowledgement. It starts draining once `ready()` (by default once
    the broker has started: the app connects it, the relay never does)."""

    async def publish(subject: str, body: bytes, headers: dict[str, str]) -> Any:
        return await broker.connection.jetstream().publish(
            subject, body, headers=headers, timeout=subjects.PUBLISH_TIMEOUT_S
        )

    return OutboxRelay(sessions, publish, ready=ready or (lambda: bool(broker.running)))


@asynccontextmanager
async def relay_beside(ctx: Any) -> AsyncIterator[OutboxRelay]:
    """A service's relay for its lifetime: `ctx.run_beside(relay_beside)` in its `main.py` (`ctx`
    is the service's `research_platform.app.ServiceContext`)."""
    async with broker_relay(ctx.sessions, ctx.broker).running() as relay:
        yield relay
