"""A process killed between a change's commit and its event's publish loses nothing.

A child process commits an event through the ledger's outbox; its relay is held before the
publish, and the process is SIGKILLed there (no shutdown hook, no final drain). Two relays then
started here publish the committed row exactly once to a consumer of the stream. A relay that
published and died before it marked its row publishes it again with the same `Nats-Msg-Id`, and
JetStream stores it once. A published row is purged a day later.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from datetime import UTC, datetime, timedelta

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_contracts import ClaimStatus, subjects
from research_contracts.messages import ClaimDecided
from research_ledger import UnitOfWork
from research_ledger.outbox import OutboxEvent, OutboxRelay, Publish
from research_platform.db import transaction

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(60, func_only=True)]

# Commits a claim's decision event through the outbox, with a relay held before its publish;
# says "committed" and waits to be killed.
CHILD = """
import asyncio, sys, uuid
from datetime import UTC, datetime, timedelta
from research_contracts import ClaimStatus, subjects
from research_contracts.messages import ClaimDecided
from research_ledger import UnitOfWork
from research_ledger.outbox import OutboxRelay
from research_platform.db import create_engine, session_factory, transaction

async def main(url, claim_id):
    sessions = session_factory(create_engine(url))
    held = asyncio.Event()
    async def held_publish(subject, body, headers):
        await held.wait()
    async with OutboxRelay(sessions, held_publish).running():
        async with transaction(sessions) as session:
            UnitOfWork(session, service="chaos").outbox.add(
                subjects.CLAIM_DECIDED,
                ClaimDecided(claim_id=uuid.UUID(claim_id), status=ClaimStatus.active,
                             decided_at=datetime.now(UTC)),
            )
        print("committed", flush=True)
        await held.wait()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _decided(claim_id: uuid.UUID) -> ClaimDecided:
    return ClaimDecided(claim_id=claim_id, status=ClaimStatus.active, decided_at=datetime.now(UTC))


async def _delivered(nc: nats.NATS, claim_id: uuid.UUID) -> int:
    """How many messages on `research.claim.decided` name `claim_id` (the stream, read whole)."""
    js = nc.jetstream()
    sub = await js.pull_subscribe(
        subjects.CLAIM_DECIDED,
        stream=subjects.CLAIMS_STREAM,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
    )
    pending = (await sub.consumer_info()).num_pending
    seen = 0
    while pending:
        batch = await sub.fetch(min(pending, 256), timeout=5)
        pending -= len(batch)
        seen += sum(str(claim_id) in msg.data.decode() for msg in batch)
    await sub.unsubscribe()
    return seen


def _publish_on(nc: nats.NATS) -> Publish:
    async def publish(subject: str, body: bytes, headers: dict[str, str]) -> object:
        return await nc.jetstream().publish(subject, body, headers=headers)

    return publish


async def _row(sessions: async_sessionmaker[AsyncSession], claim_id: uuid.UUID) -> OutboxEvent:
    async with sessions() as session:
        row = await session.scalar(
            select(OutboxEvent).where(OutboxEvent.body.contains(str(claim_id)))
        )
    assert row is not None, "the committed event is in the outbox"
    return row


async def test_an_event_committed_before_a_kill_is_published_once_after_it(
    servers: Servers, sessions: async_sessionmaker[AsyncSession], nc: nats.NATS
) -> None:
    claim_id = uuid.uuid4()
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CHILD,
        servers.database_url,
        str(claim_id),
        stdout=asyncio.subprocess.PIPE,
        env=os.environ.copy(),
    )
    assert child.stdout is not None
    line = await asyncio.wait_for(child.stdout.readline(), 30)
    assert line.strip() == b"committed", line
    child.send_signal(signal.SIGKILL)
    await child.wait()

    assert (await _row(sessions, claim_id)).published_at is None, "killed before the publish"
    assert await _delivered(nc, claim_id) == 0

    first, second = OutboxRelay(sessions, _publish_on(nc)), OutboxRelay(sessions, _publish_on(nc))
    await asyncio.gather(first.drain(), second.drain())  # two processes starting at once
    await first.drain()

    assert await _delivered(nc, claim_id) == 1, "published exactly once"
    assert (await _row(sessions, claim_id)).published_at is not None


async def test_a_relay_dead_after_the_publish_publishes_again_and_jetstream_keeps_one(
    sessions: async_sessionmaker[AsyncSession], nc: nats.NATS
) -> None:
    claim_id = uuid.uuid4()
    async with transaction(sessions) as session:
        UnitOfWork(session, service="chaos").outbox.add(subjects.CLAIM_DECIDED, _decided(claim_id))

    class Died(Exception):
        """The relay's process ended after the publish, before the row was marked."""

    acks = []  # the stream's acknowledgements of this event's publishes

    async def publish_then_die(subject: str, body: bytes, headers: dict[str, str]) -> object:
        ack = await nc.jetstream().publish(subject, body, headers=headers)
        if str(claim_id) in body.decode():
            acks.append(ack)
            raise Died
        return ack

    with pytest.raises(Died):
        await OutboxRelay(sessions, publish_then_die).drain()
    assert (await _row(sessions, claim_id)).published_at is None

    async def publish(subject: str, body: bytes, headers: dict[str, str]) -> object:
        ack = await nc.jetstream().publish(subject, body, headers=headers)
        if str(claim_id) in body.decode():
            acks.append(ack)
        return ack

    await OutboxRelay(sessions, publish).drain()

    assert [bool(ack.duplicate) for ack in acks] == [False, True], "stored once"
    assert await _delivered(nc, claim_id) == 1
    assert (await _row(sessions, claim_id)).published_at is not None


async def test_a_published_row_is_purged_a_day_later(
    sessions: async_sessionmaker[AsyncSession], nc: nats.NATS
) -> None:
    old, fresh = uuid.uuid4(), uuid.uuid4()
    async with transaction(sessions) as session:
        outbox = UnitOfWork(session, service="chaos").outbox
        for claim_id in (old, fresh):
            outbox.add(subjects.CLAIM_DECIDED, _decided(claim_id))
    relay = OutboxRelay(sessions, _publish_on(nc))
    await relay.drain()
    aged = await _row(sessions, old)
    async with transaction(sessions) as session:
        await session.execute(
            update(OutboxEvent)
            .where(OutboxEvent.id == aged.id)
            .values(published_at=datetime.now(UTC) - timedelta(days=2))
        )
    assert await relay.purge() >= 1
    async with sessions() as session:
        left = list(
            await session.scalars(
                select(OutboxEvent.body).where(
                    OutboxEvent.body.contains(str(old)) | OutboxEvent.body.contains(str(fresh))
                )
            )
        )
    assert [str(fresh) in body for body in left] == [True], "only the fresh row is kept"
