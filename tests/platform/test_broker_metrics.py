"""Every service's broker metrics on a real nats-server, read back from a real `/metrics` scrape:
settlements per subject and outcome, handler latency, in-flight, and the consumers' lag."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import nats
import pytest
from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, PullSub
from nats.js.api import AckPolicy as JsAckPolicy
from nats.js.api import ConsumerConfig as JsConsumerConfig

from bench.harness.servers import Servers
from research_contracts import RunResearch, subjects
from research_platform import metrics
from research_platform.broker import make_broker
from research_platform.delivery import DeadLetter, Delivery
from research_platform.errors import TransientError
from tests.scrape import scrape, value
from tests.teardown import stopped

pytestmark = pytest.mark.integration

MAX_DELIVER = 3


@dataclass
class Worker:
    """A typed handler behind `Delivery` and the metrics middleware, as `run_service` wires it."""

    service: str
    subject: str
    durable: str
    flaky_left: int = 1
    letters: list[DeadLetter] = field(default_factory=list)

    async def record(self, letter: DeadLetter) -> None:
        self.letters.append(letter)

    async def handle(self, task: RunResearch) -> None:
        if task.question.startswith("flaky") and self.flaky_left:
            self.flaky_left -= 1
            raise TransientError("the connector did not answer")
        await asyncio.sleep(0.05)


@pytest.fixture
async def worker(servers: Servers, nc: nats.NATS, unique: str) -> AsyncIterator[Worker]:
    found = Worker(
        service=f"svc-{unique}", subject=f"research.task.m{unique}", durable=f"metrics-{unique}"
    )
    broker = make_broker(servers.nats_url, found.service)
    delivery = Delivery.install(
        broker, service=found.service, max_deliver=MAX_DELIVER, ack_wait_s=5
    )
    delivery.record = found.record
    broker.subscriber(
        found.subject,
        stream=JStream(subjects.TASKS_STREAM, declare=False),
        durable=found.durable,
        config=ConsumerConfig(ack_wait=5, max_deliver=MAX_DELIVER),
        pull_sub=PullSub(batch_size=1, timeout=0.5),
        ack_policy=AckPolicy.MANUAL,
    )(found.handle)
    app = FastStream(broker)
    metrics.instrument_app(app, found.service, interval_s=0.2)
    await app.start()
    try:
        yield found
    finally:
        await stopped(app.stop(), "metrics worker's app")
        await nc.jetstream().delete_consumer(subjects.TASKS_STREAM, found.durable)


async def _until(check, timeout: float = 30.0) -> None:
    for _ in range(int(timeout / 0.1)):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not met in time")


async def test_settlements_latency_and_in_flight_per_subject(
    worker: Worker, nc: nats.NATS, metrics_url: str
) -> None:
    js = nc.jetstream()
    for question in ("one fine question", "another fine question", "flaky once"):
        await js.publish(worker.subject, RunResearch(question=question).model_dump_json().encode())
    await js.publish(worker.subject, b"\x00 not json")
    mine = {"service": worker.service, "subject": worker.subject}

    def all_settled() -> bool:
        samples = scrape(metrics_url)
        return (
            value(samples, "research_messages_total", **mine, result="acked") or 0
        ) >= 3 and bool(value(samples, "research_messages_total", **mine, result="dead_lettered"))

    await _until(all_settled)
    samples = scrape(metrics_url)
    assert value(samples, "research_messages_total", **mine, result="acked") == 3
    assert (
        value(samples, "research_messages_total", **mine, result="nacked") == 1
    )  # the flaky one, then acked
    assert value(samples, "research_messages_total", **mine, result="dead_lettered") == 1
    assert len(worker.letters) == 1

    handler = {"app_name": worker.service, "handler": worker.subject}
    assert (
        value(samples, "research_received_messages_total", **handler) == 5
    )  # 4 messages, one delivered twice
    count = value(samples, "research_received_processed_messages_duration_seconds_count", **handler)
    total = value(samples, "research_received_processed_messages_duration_seconds_sum", **handler)
    assert (
        count == 5 and total is not None and total >= 0.05 * 3
    )  # three handled bodies slept 50 ms each
    assert (
        value(samples, "research_received_messages_in_process", **handler) == 0
    )  # nothing in flight now


async def test_consumer_lag_is_read_from_jetstream(
    worker: Worker, nc: nats.NATS, unique: str, metrics_url: str
) -> None:
    """A durable nobody pulls from: its pending count is the number of messages published since."""
    js = nc.jetstream()
    subject, durable = f"research.task.lag{unique}", f"lag-{unique}"
    await js.add_consumer(
        subjects.TASKS_STREAM,
        JsConsumerConfig(
            durable_name=durable, filter_subject=subject, ack_policy=JsAckPolicy.EXPLICIT
        ),
    )
    try:
        for n in range(3):
            await js.publish(
                subject, RunResearch(question=f"waiting {n}").model_dump_json().encode()
            )
        lag = metrics.ConsumerLag(worker_broker(nc), [(subjects.TASKS_STREAM, durable)])
        await lag.read_once()
        samples = scrape(metrics_url)
        assert (
            value(
                samples,
                "research_consumer_pending_messages",
                stream=subjects.TASKS_STREAM,
                consumer=durable,
            )
            == 3
        )
        assert (
            value(
                samples,
                "research_consumer_ack_pending_messages",
                stream=subjects.TASKS_STREAM,
                consumer=durable,
            )
            == 0
        )
        # the worker's own durable is read by the loop `instrument_app` started
        await _until(
            lambda: (
                value(
                    scrape(metrics_url),
                    "research_consumer_pending_messages",
                    stream=subjects.TASKS_STREAM,
                    consumer=worker.durable,
                )
                == 0
            )
        )
    finally:
        await js.delete_consumer(subjects.TASKS_STREAM, durable)


def worker_broker(nc: nats.NATS):
    """`ConsumerLag` only needs `.connection.jetstream()`: hand it the test's connection."""

    class _Connected:
        connection = nc

    return _Connected()


def test_subject_labels_carry_no_ids() -> None:
    assert (
        metrics.subject_label("research.run.5f0c3a2e-8d1b-4c8e-9a51-1b2c3d4e5f60.event")
        == "research.run.*.event"
    )
    assert (
        metrics.subject_label("research.deadletter.research.task.batched")
        == "research.deadletter.research.task.batched"
    )
