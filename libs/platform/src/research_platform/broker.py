"""The broker factory, the JetStream streams, and the guarded consume path every consumer uses.

Streams are created (or updated) idempotently by `ensure_streams` at every process start.
`consume_guarded` turns the outcome of a handler into the right acknowledgement:

- success → ack;
- `PrepareError` (bad input) → the raw message is copied to `research.deadletter.<subject>`,
  an audit row `consumer.dead_letter` is written, and the message is terminated;
- `TransientError` or any other exception → nack with a delay; on the last allowed delivery
  the message is dead-lettered instead, so nothing is retried forever and nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from faststream.nats import NatsBroker, NatsMessage
from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import subjects
from research_platform import audit
from research_platform.errors import PrepareError, TransientError
from research_platform.logging import get_logger
from research_platform.nats_seeds import connect, replicated, seed_urls, stream_replicas

log = get_logger(__name__)

DAY = 24 * 3600

STREAMS: tuple[StreamConfig, ...] = (
    StreamConfig(
        name=subjects.TASKS_STREAM,
        subjects=list(subjects.TASK_SUBJECTS),
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=7 * DAY,
        duplicate_window=600,
    ),
    StreamConfig(
        name=subjects.CLAIMS_STREAM,
        subjects=list(subjects.CLAIM_SUBJECTS),
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=7 * DAY,
        duplicate_window=600,
    ),
    StreamConfig(
        name=subjects.DEAD_LETTER_STREAM,
        subjects=list(subjects.DEAD_LETTER_SUBJECTS),
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=30 * DAY,
    ),
)


async def ensure_streams(js: JetStreamContext, replicas: int = 1) -> None:
    """Create every stream, or update it to the declared config; safe to call from every replica.

    `replicas` is each stream's replica count (3 on a cluster, see `nats_seeds.stream_replicas`).
    """
    for declared in STREAMS:
        config = replicated(declared, replicas)
        try:
            await js.stream_info(config.name)
        except NotFoundError:
            try:
                await js.add_stream(config)
                continue
            except Exception:  # another replica created it between the two calls
                pass
        await js.update_stream(config)


async def ensure_streams_at(url: str, replicas: int | None = None) -> None:
    """Connect, ensure streams, disconnect (used by the launcher before services start).

    `url` may list several seeds; `replicas` defaults to `NATS_STREAM_REPLICAS`, else detected.
    """
    nc = await connect(url, max_reconnect_attempts=3)
    try:
        await ensure_streams(nc.jetstream(), stream_replicas(nc, replicas))
    finally:
        await nc.close()


def make_broker(url: str, service: str) -> NatsBroker:
    """A FastStream NATS broker that reconnects forever (the server may restart under it).

    `url` may list several comma-separated seeds (the members of a cluster).
    """
    return NatsBroker(
        seed_urls(url),
        name=service,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        logger=logging.getLogger("faststream.broker"),  # rendered as JSON by the root handler
    )


async def dead_letter(
    broker: NatsBroker,
    sessions: async_sessionmaker[AsyncSession],
    msg: NatsMessage,
    *,
    service: str,
    reason: str,
) -> None:
    """Park `msg` on the dead-letter subject with the reason, and audit it."""
    raw = msg.raw_message
    subject = raw.subject
    await broker.publish(
        msg.body,
        subjects.dead_letter_subject(subject),
        headers={"x-original-subject": subject, "x-reason": reason[:500], "x-service": service},
        stream=subjects.DEAD_LETTER_STREAM,
    )
    async with sessions() as session, session.begin():
        audit.record(
            session,
            service=service,
            action="consumer.dead_letter",
            subject_ids={"subject": subject},
            payload={"reason": reason[:2000], "body": msg.body[:4000].decode("utf-8", "replace")},
        )


def delivery_count(msg: NatsMessage) -> int:
    try:
        return int(msg.raw_message.metadata.num_delivered)
    except Exception:
        return 1


async def consume_guarded(
    msg: NatsMessage,
    handler: Callable[[], Awaitable[Any]],
    *,
    broker: NatsBroker,
    sessions: async_sessionmaker[AsyncSession],
    service: str,
    max_deliver: int,
    heartbeat_s: float = 10.0,
) -> None:
    """Run `handler` for `msg` and settle the message; never raises (the consumer keeps serving)."""
    heartbeat = asyncio.create_task(_heartbeat(msg, heartbeat_s))
    try:
        await handler()
    except PrepareError as exc:
        log.warning("message rejected", reason=str(exc), subject=msg.raw_message.subject)
        await _settle_dead(msg, broker, sessions, service, f"prepare: {exc}")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # transient or unexpected: retry, but not forever
        attempt = delivery_count(msg)
        kind = "transient" if isinstance(exc, TransientError) else "error"
        if attempt >= max_deliver:
            log.error("message failed on its last delivery", attempt=attempt, error=repr(exc))
            await _settle_dead(msg, broker, sessions, service, f"{kind} after {attempt} deliveries: {exc!r}")
        else:
            log.warning("message failed, will retry", attempt=attempt, error=repr(exc))
            await msg.nack(delay=min(30.0, 0.5 * 2**attempt))
    else:
        await msg.ack()
    finally:
        heartbeat.cancel()


async def _settle_dead(
    msg: NatsMessage, broker: NatsBroker, sessions: async_sessionmaker[AsyncSession], service: str, reason: str
) -> None:
    try:
        await dead_letter(broker, sessions, msg, service=service, reason=reason)
    except Exception as exc:  # cannot park it: keep it for a later delivery rather than lose it
        log.error("dead-lettering failed, message will be redelivered", error=repr(exc))
        await msg.nack(delay=5.0)
        return
    await msg.reject()


async def _heartbeat(msg: NatsMessage, every_s: float) -> None:
    """Tell JetStream the message is still being worked on, so ack_wait does not expire."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await msg.in_progress()
        except Exception:
            return
