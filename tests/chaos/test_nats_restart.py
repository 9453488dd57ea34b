"""NATS killed with SIGKILL and restarted under load: the JetStream file store keeps everything.

A dedicated nats-server (not the session's: other tests keep their connections) takes a burst;
a third of the way through it is killed and started again on the same port and store. The
publisher retries with the same `Nats-Msg-Id`, the consumer reconnects by itself. Acks
confirmed just before the kill may be redelivered once (see `tests/burst.py`): counted, printed.

A restarted server does not answer acks for deliveries made before the kill, so the consumer
drops the rest of its batch when an ack goes unanswered (see `tests/burst.py`) instead of waiting
out the ack timeout on each; JetStream redelivers them after `ack_wait` (2 s here).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest
from nats.js.api import ConsumerConfig, StorageType, StreamConfig

from research_platform.embedded import EmbeddedNats
from research_platform.nats_seeds import connect
from tests.burst import RETRYABLE, BurstRecord, consume, publish_until_acked

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.timeout(150)]

BURST = 1500
DOWN_S = 1.0


async def restart_after(server: EmbeddedNats, seconds: float) -> object:
    await asyncio.sleep(seconds)
    return await asyncio.to_thread(server.start)


async def test_nats_killed_and_restarted_mid_burst_loses_nothing(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path).start()
    stream, subject = "CHAOS_NATS", "test.chaos.nats"
    nc = await connect(server.url)
    js = nc.jetstream(timeout=5)
    record = BurstRecord()
    consumer: asyncio.Task[None] | None = None
    try:
        await js.add_stream(
            StreamConfig(
                name=stream, subjects=[subject], storage=StorageType.FILE, duplicate_window=300
            )
        )
        await js.add_consumer(
            stream, ConsumerConfig(durable_name="worker", ack_wait=2, max_ack_pending=1000)
        )
        consumer = asyncio.create_task(
            consume(js, subject, stream, "worker", record, BURST, strict_acks=False)
        )
        killed_at = time.monotonic()
        restart: asyncio.Task[object] | None = None
        for index in range(BURST):
            if index == BURST // 3:  # the publisher keeps going while the server is down
                server.kill()
                killed_at = time.monotonic()
                restart = asyncio.create_task(restart_after(server, DOWN_S))
            await asyncio.wait_for(publish_until_acked(js, subject, index, record), 60)
        assert restart is not None
        await restart
        await asyncio.wait_for(consumer, 90)
        recovered_s = time.monotonic() - killed_at

        info = await js.stream_info(stream)
        assert info.state.messages == BURST  # nothing lost from the file store, no duplicate stored
        assert sorted(record.done) == list(range(BURST))  # every message delivered and worked
        print(
            f"\nnats killed for {DOWN_S:.0f}s: {record.publish_retries} publish retries,"
            f" {record.redelivered} redeliveries ({record.acked_again} after a confirmed ack), burst done {recovered_s:.1f}s after the kill"
        )
    finally:
        if consumer is not None:
            consumer.cancel()
        with contextlib.suppress(*RETRYABLE):
            await nc.close()
        server.stop()
