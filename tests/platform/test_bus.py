"""Streams and durable pull consumers on a real nats-server with JetStream."""

from __future__ import annotations

import asyncio
import json

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from research_contracts import subjects
from research_platform.broker import STREAMS, ensure_streams

pytestmark = pytest.mark.integration


async def test_streams_are_created_idempotently(nc: nats.NATS) -> None:
    js = nc.jetstream()
    await ensure_streams(js)
    await ensure_streams(js)  # a second replica starting
    for config in STREAMS:
        assert config.name is not None
        info = await js.stream_info(config.name)
        assert info.config.subjects == config.subjects


async def test_a_task_sent_again_after_its_first_copy_was_worked_off_does_not_run_twice(
    nc: nats.NATS, unique: str
) -> None:
    """The gateway retries a publish whose reply it lost with the same `Nats-Msg-Id`; the retry
    may come after the researcher has already taken and acked the first copy. It is still
    dropped: the consumer never sees the task a second time."""
    js = nc.jetstream()
    await ensure_streams(js)
    durable = f"test-{unique}"
    subject = subjects.task_subject("priority")
    await js.add_consumer(
        subjects.TASKS_STREAM,
        ConsumerConfig(
            durable_name=durable,
            filter_subject=subject,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.NEW,
        ),
    )
    sub = await js.pull_subscribe(subject, durable=durable, stream=subjects.TASKS_STREAM)
    body = json.dumps({"question": f"Does {unique} help?"}).encode()
    first = await js.publish(subject, body, headers={subjects.MSG_ID_HEADER: f"task-{unique}"})
    worked = (await sub.fetch(1, timeout=5))[0]
    await worked.ack_sync()
    retry = await js.publish(subject, body, headers={subjects.MSG_ID_HEADER: f"task-{unique}"})
    assert retry.duplicate and retry.seq == first.seq
    with pytest.raises(nats.errors.TimeoutError):
        await sub.fetch(1, timeout=1)
    await js.delete_consumer(subjects.TASKS_STREAM, durable)


async def test_durable_pull_consumer_redelivers_unacked_work(nc: nats.NATS, unique: str) -> None:
    js = nc.jetstream()
    durable = f"test-{unique}"
    subject = subjects.task_subject("batched")
    await js.add_consumer(
        subjects.TASKS_STREAM,
        ConsumerConfig(
            durable_name=durable,
            filter_subject=subject,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=1,
            max_deliver=3,
            deliver_policy=DeliverPolicy.NEW,
        ),
    )
    sub = await js.pull_subscribe(subject, durable=durable, stream=subjects.TASKS_STREAM)
    ack = await js.publish(
        subject, json.dumps({"question": unique}).encode(), headers={subjects.MSG_ID_HEADER: unique}
    )
    duplicate = await js.publish(
        subject, json.dumps({"question": unique}).encode(), headers={subjects.MSG_ID_HEADER: unique}
    )
    assert duplicate.duplicate and duplicate.seq == ack.seq  # de-duplicated by Nats-Msg-Id

    first = (await sub.fetch(1, timeout=5))[0]
    assert json.loads(first.data)["question"] == unique
    await asyncio.sleep(1.5)  # not acked within ack_wait: JetStream hands it out again
    again = (await sub.fetch(1, timeout=5))[0]
    assert again.metadata.num_delivered == 2 and again.data == first.data
    await again.ack()
    with pytest.raises(nats.errors.TimeoutError):
        await sub.fetch(1, timeout=1)
    await js.delete_consumer(subjects.TASKS_STREAM, durable)
