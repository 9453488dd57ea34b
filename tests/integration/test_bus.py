"""Streams and durable pull consumers on a real nats-server with JetStream."""

from __future__ import annotations

import asyncio
import json

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from research_contracts import subjects
from research_platform.broker import STREAMS, ensure_streams

pytestmark = pytest.mark.integration


async def test_streams_are_created_idempotently(nc: nats.NATS) -> None:
    js = nc.jetstream()
    await ensure_streams(js)
    await ensure_streams(js)  # a second replica starting
    for config in STREAMS:
        info = await js.stream_info(config.name)
        assert info.config.subjects == config.subjects
    tasks = await js.stream_info(subjects.TASKS_STREAM)
    assert tasks.config.duplicate_window == 600


async def test_durable_pull_consumer_redelivers_unacked_work(nc: nats.NATS, unique: str) -> None:
    js = nc.jetstream()
    durable = f"test-{unique}"
    subject = subjects.task_subject("batched")
    await js.add_consumer(
        subjects.TASKS_STREAM,
        ConsumerConfig(durable_name=durable, filter_subject=subject, ack_policy=AckPolicy.EXPLICIT, ack_wait=1, max_deliver=3, deliver_policy="new"),
    )
    sub = await js.pull_subscribe(subject, durable=durable, stream=subjects.TASKS_STREAM)
    ack = await js.publish(subject, json.dumps({"question": unique}).encode(), headers={subjects.MSG_ID_HEADER: unique})
    duplicate = await js.publish(subject, json.dumps({"question": unique}).encode(), headers={subjects.MSG_ID_HEADER: unique})
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
