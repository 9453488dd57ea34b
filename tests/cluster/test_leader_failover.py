"""Killing the stream leader of an R3 stream during a burst loses and duplicates nothing.

A real 3-node cluster: the publisher sends with `Nats-Msg-Id` and retries until JetStream acks;
a durable pull consumer acks each message with `ack_sync` after recording it. The stream leader
(from `stream_info().cluster.leader`) is killed with SIGKILL a third of the way through.
Nothing lost: every message is delivered. Nothing duplicated: the stream stores each message
once despite the publish retries, and no message whose ack the cluster confirmed comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from nats.js.api import ConsumerConfig, StorageType, StreamConfig

from research_platform.embedded_cluster import EmbeddedNatsCluster
from research_platform.nats_seeds import connect
from tests.burst import RETRYABLE, BurstRecord, consume, publish_until_acked, until_answered

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

BURST = 1500


async def test_killing_the_stream_leader_mid_burst_loses_and_duplicates_nothing(
    healthy_cluster: EmbeddedNatsCluster, unique: str
) -> None:
    cluster = healthy_cluster
    stream, subject = f"FAILOVER_{unique}", f"test.failover.{unique}"
    nc = await connect(cluster.url)
    js = nc.jetstream(timeout=5)
    record = BurstRecord()
    consumer: asyncio.Task[None] | None = None
    try:
        config = StreamConfig(
            name=stream,
            subjects=[subject],
            storage=StorageType.FILE,
            num_replicas=3,
            duplicate_window=300,
        )
        await until_answered(lambda: js.add_stream(config))
        await until_answered(
            lambda: js.add_consumer(
                stream, ConsumerConfig(durable_name="worker", ack_wait=5, max_ack_pending=1000)
            )
        )
        consumer = asyncio.create_task(consume(js, subject, stream, "worker", record, BURST))
        killed = ""
        killed_at = time.monotonic()
        for index in range(BURST):
            if index == BURST // 3:
                placement = (await js.stream_info(stream)).cluster
                assert placement is not None and placement.leader is not None
                killed = placement.leader
                cluster.kill(killed)
                killed_at = time.monotonic()
            await asyncio.wait_for(publish_until_acked(js, subject, index, record), 60)
        await asyncio.wait_for(consumer, 60)
        recovered_s = time.monotonic() - killed_at

        info = await js.stream_info(stream)
        assert killed and info.cluster is not None and info.cluster.leader != killed
        assert info.state.messages == BURST  # retried publishes were de-duplicated by Nats-Msg-Id
        assert sorted(record.done) == list(range(BURST))  # nothing lost
        # Redeliveries only of messages whose ack was lost with the killed server (asserted in
        # `consume`); a handler keyed by message id (as the engine's claim id is keyed by task id)
        # therefore does each message's work exactly once.
        print(
            f"\nleader {killed} killed: {record.publish_retries} publish retries,"
            f" {record.redelivered} redeliveries of unconfirmed acks,"
            f" burst done {recovered_s:.1f}s after the kill"
        )
    finally:
        if consumer is not None:
            consumer.cancel()
        with contextlib.suppress(*RETRYABLE):
            await js.delete_stream(stream)
        await nc.close()
