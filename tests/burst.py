"""A JetStream burst that survives server crashes: the publisher and consumer of the chaos tests.

The publisher sends message `i` with `Nats-Msg-Id: m-i` and retries with the same id until
JetStream acks it (a retry after a lost ack is dropped by the stream's duplicate window). The
consumer does the work of each delivery, then `ack_sync`s it; if the work fails it naks the
message for a later delivery. It records every delivery and every ack the server confirmed.

On an R3 cluster a confirmed ack is replicated, so a message whose ack was confirmed must never
come back (`strict_acks`). A single server killed with SIGKILL loses the consumer state it had
not yet written (the last few hundred milliseconds of acks): those messages come back once
more after the restart. That is at-least-once delivery, and why every handler is idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import nats.errors
from nats.js import JetStreamContext

# While a server restarts, a leader is elected or the client fails over, requests time out,
# find no stream or no connection: every NATS error is retried.
RETRYABLE: tuple[type[BaseException], ...] = (nats.errors.Error, asyncio.TimeoutError)
Work = Callable[[int], Awaitable[None]]


@dataclass
class BurstRecord:
    """What happened to the burst: deliveries (duplicates included), confirmed acks, retries."""

    received: list[int] = field(default_factory=list)
    done: set[int] = field(default_factory=set)
    confirmed: set[int] = field(default_factory=set)
    acked_again: int = 0
    publish_retries: int = 0
    work_failures: int = 0

    @property
    def redelivered(self) -> int:
        return len(self.received) - len(set(self.received))


async def until_answered(request: Callable[[], Awaitable[object]], deadline_s: float = 60) -> None:
    """Retry a JetStream API request (create a stream or consumer) until the cluster answers.

    Right after members restart, the meta leader can be elected yet still catching up, so a
    create times out; creating again with the same config is idempotent.
    """
    loop = asyncio.get_running_loop()
    give_up = loop.time() + deadline_s
    while True:
        try:
            await request()
            return
        except RETRYABLE:
            if loop.time() > give_up:
                raise
            await asyncio.sleep(0.5)


async def publish_until_acked(
    js: JetStreamContext, subject: str, index: int, record: BurstRecord
) -> None:
    """Publish message `index`, retrying with the same id until JetStream acks it."""
    while True:
        try:
            await js.publish(
                subject, str(index).encode(), headers={"Nats-Msg-Id": f"m-{index}"}, timeout=2
            )
            return
        except RETRYABLE:
            record.publish_retries += 1
            await asyncio.sleep(0.1)


async def consume(
    js: JetStreamContext,
    subject: str,
    stream: str,
    durable: str,
    record: BurstRecord,
    want: int,
    work: Work | None = None,
    *,
    strict_acks: bool = True,
) -> None:
    """Work and ack deliveries until the work of `want` distinct messages is done."""
    sub = None
    while len(record.done) < want:
        try:
            if sub is None:
                sub = await js.pull_subscribe(subject, durable=durable, stream=stream)
            batch = await sub.fetch(50, timeout=1)
        except RETRYABLE:
            await asyncio.sleep(0.05)
            continue
        for msg in batch:
            index = int(msg.data)
            record.received.append(index)
            if work is not None:
                try:
                    await work(index)
                except Exception:  # noqa: BLE001 - the store is down: leave the message to a later delivery
                    record.work_failures += 1
                    with contextlib.suppress(*RETRYABLE):
                        await msg.nak(delay=0.5)
                    continue
            record.done.add(index)
            try:
                await msg.ack_sync(timeout=2)
            except RETRYABLE:
                # The ack is lost with its server, and so are the rest of this batch's deliveries:
                # a restarted server does not answer acks for them, so each would wait out the ack
                # timeout. Drop them; JetStream redelivers them after `ack_wait`.
                break
            if index in record.confirmed:
                assert not strict_acks, f"message {index} redelivered after a confirmed ack"
                record.acked_again += 1
            record.confirmed.add(index)
