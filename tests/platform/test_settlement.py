"""`Delivery`, the one consume middleware, on a real nats-server: heartbeats, back-off, and a
message that cannot be audited is still parked and terminated (never lost, never redelivered)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import nats
import pytest
from faststream import AckPolicy
from faststream.nats import ConsumerConfig, JStream, PullSub
from nats.aio.msg import Msg

from bench.harness.servers import Servers
from research_contracts import RunResearch, subjects
from research_platform.broker import make_broker
from research_platform.delivery import DeadLetter, Delivery
from research_platform.errors import TransientError
from tests.teardown import stopped

pytestmark = pytest.mark.integration

ACK_WAIT_S = 1.5
MAX_DELIVER = 3


@dataclass
class Consumer:
    """A typed handler behind `Delivery` on its own task subject, recording what it saw."""

    subject: str
    seen: list[str] = field(default_factory=list)
    letters: list[DeadLetter] = field(default_factory=list)
    audit_fails: bool = False
    audit_s: float = 0.0  # how long recording a dead letter takes

    async def record(self, letter: DeadLetter) -> None:
        if self.audit_fails:
            raise ConnectionError("the audit database is down")
        await asyncio.sleep(self.audit_s)
        self.letters.append(letter)

    async def handle(self, task: RunResearch) -> None:
        self.seen.append(task.question)
        if task.question.startswith("slow"):
            await asyncio.sleep(ACK_WAIT_S * 3)  # three ack_waits: only heartbeats keep it ours
        if task.question.startswith("flaky"):
            raise TransientError("the connector did not answer")


@pytest.fixture
async def consumer(servers: Servers, nc: nats.NATS, unique: str) -> AsyncIterator[Consumer]:
    found = Consumer(subject=f"research.task.t{unique}")
    broker = make_broker(servers.nats_url, "test-settlement")
    delivery = Delivery.install(
        broker, service="test-settlement", max_deliver=MAX_DELIVER, ack_wait_s=ACK_WAIT_S
    )
    delivery.record = found.record
    broker.subscriber(
        found.subject,
        stream=JStream(subjects.TASKS_STREAM, declare=False),
        durable=f"test-{unique}",
        config=ConsumerConfig(ack_wait=ACK_WAIT_S, max_deliver=MAX_DELIVER),
        pull_sub=PullSub(batch_size=2, timeout=0.5),
        max_workers=2,  # as the services run: fetching goes on while a message is settled
        ack_policy=AckPolicy.MANUAL,
    )(found.handle)
    await broker.start()
    try:
        yield found
    finally:
        await stopped(broker.stop(), "settlement consumer's broker")
        await nc.jetstream().delete_consumer(subjects.TASKS_STREAM, f"test-{unique}")


def _headers(msg: Msg) -> dict[str, str]:
    """A dead-letter copy's headers (every copy carries the reason and the original subject)."""
    assert msg.headers is not None, msg
    return msg.headers


async def _parked(nc: nats.NATS, subject: str, count: int, timeout: float = 30) -> list[Msg]:
    sub = await nc.jetstream().subscribe(
        subjects.dead_letter_subject(subject), ordered_consumer=True
    )
    parked: list[Msg] = []
    deadline = time.monotonic() + timeout
    try:
        while len(parked) < count and time.monotonic() < deadline:
            try:
                parked.append(await sub.next_msg(timeout=1))
            except (TimeoutError, nats.errors.TimeoutError):
                continue
    finally:
        await sub.unsubscribe()
    return parked


async def _settled(nc: nats.NATS, durable: str) -> None:
    for _ in range(300):
        info = await nc.jetstream().consumer_info(subjects.TASKS_STREAM, durable)
        if info.num_pending == 0 and info.num_ack_pending == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{durable} did not settle")


async def test_a_message_that_cannot_be_audited_is_still_parked_and_terminated(
    consumer: Consumer, nc: nats.NATS, unique: str
) -> None:
    consumer.audit_fails = True
    body = b'{"task_id": "not-a-uuid", "question": "\x00"}'
    await nc.jetstream().publish(consumer.subject, body)
    [copy] = await _parked(nc, consumer.subject, 1)
    assert copy.data == body and _headers(copy)["x-reason"].startswith("invalid message")
    await _settled(nc, f"test-{unique}")
    await asyncio.sleep(
        ACK_WAIT_S * 2
    )  # past ack_wait: a message left unterminated would come back
    info = await nc.jetstream().consumer_info(subjects.TASKS_STREAM, f"test-{unique}")
    assert info.num_redelivered == 0 and info.delivered.consumer_seq == 1
    assert len(await _parked(nc, consumer.subject, 2, timeout=2)) == 1


async def test_a_slow_task_keeps_its_lease_and_a_flaky_one_is_parked_after_its_last_delivery(
    consumer: Consumer, nc: nats.NATS, unique: str
) -> None:
    await nc.jetstream().publish(
        consumer.subject, RunResearch(question="slow but fine").model_dump_json().encode()
    )
    flaky = RunResearch(question="flaky every time")
    await nc.jetstream().publish(consumer.subject, flaky.model_dump_json().encode())
    [copy] = await _parked(nc, consumer.subject, 1)
    await _settled(nc, f"test-{unique}")
    assert consumer.seen.count("slow but fine") == 1  # heartbeats: never handed out again
    assert consumer.seen.count("flaky every time") == MAX_DELIVER
    assert json.loads(copy.data)["task_id"] == str(flaky.task_id) and _headers(copy)[
        "x-deliveries"
    ] == str(MAX_DELIVER)
    [letter] = consumer.letters
    assert letter.task_id == flaky.task_id and letter.reason.startswith(
        f"transient after {MAX_DELIVER} deliveries"
    )
    assert letter.message_id == _headers(copy)[subjects.MSG_ID_HEADER]


async def test_a_dead_letter_recorded_slower_than_ack_wait_is_parked_and_audited_once(
    consumer: Consumer, nc: nats.NATS, unique: str
) -> None:
    consumer.audit_s = ACK_WAIT_S * 2  # a busy audit database: the settlement outlasts ack_wait
    body = b'{"task_id": "not-a-uuid", "question": "\x00"}'
    await nc.jetstream().publish(consumer.subject, body)
    [copy] = await _parked(nc, consumer.subject, 1)
    await _settled(nc, f"test-{unique}")
    await asyncio.sleep(ACK_WAIT_S * 2)
    info = await nc.jetstream().consumer_info(subjects.TASKS_STREAM, f"test-{unique}")
    assert (
        info.num_redelivered == 0 and info.delivered.consumer_seq == 1
    )  # the heartbeat held it to the end
    assert [letter.message_id for letter in consumer.letters] == [
        _headers(copy)[subjects.MSG_ID_HEADER]
    ]


async def test_a_message_parked_twice_is_stored_and_audited_once(
    servers: Servers, nc: nats.NATS, unique: str
) -> None:
    """A second delivery of a message still being parked (its ack_wait ran out on a busy machine)
    parks it again: JetStream keeps one copy (its `Nats-Msg-Id`) and the audit keeps one row."""
    subject, durable = f"research.task.twice{unique}", f"twice-{unique}"
    found = Consumer(subject=subject)
    broker = make_broker(servers.nats_url, "test-settlement")
    delivery = Delivery.install(
        broker, service="test-settlement", max_deliver=MAX_DELIVER, ack_wait_s=ACK_WAIT_S
    )
    delivery.record = found.record
    js = nc.jetstream()
    await js.publish(subject, b'{"question": "\x00"}')
    sub = await js.pull_subscribe(subject, durable, stream=subjects.TASKS_STREAM)
    await broker.connect()
    try:
        [raw] = await sub.fetch(1, timeout=5)
        assert await delivery.park(raw, "bad input") and await delivery.park(raw, "bad input")
        await raw.term()
        assert len(await _parked(nc, subject, 2, timeout=2)) == 1
        assert len(found.letters) == 1
    finally:
        await sub.unsubscribe()
        await stopped(broker.stop(), "park broker")
        await js.delete_consumer(subjects.TASKS_STREAM, durable)
