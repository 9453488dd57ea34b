"""The broker factory, the JetStream streams and the declared publishers.

Streams are declared once, in `STREAM_TABLE`, and created (or updated) idempotently from it by
`ensure_streams` at every process start. How a consumed message is acknowledged, retried or
dead-lettered is `delivery.Delivery`, the one middleware every JetStream consumer runs behind. What a service emits is declared with
`declare_publishers`, so its AsyncAPI document lists each event with its payload schema.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

from faststream.nats import JStream, NatsBroker
from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError
from pydantic import BaseModel

from research_contracts import subjects
from research_platform.nats_seeds import connect, replicated, seed_urls, stream_replicas
from research_platform.settings import Settings
from research_runs.stream import RUNS_STREAM_CONFIG

DAY = 24 * 3600


@dataclasses.dataclass(frozen=True)
class Stream:
    """One row of the stream table: a JetStream stream of the engine, what it holds, how long."""

    name: str
    subjects: tuple[str, ...]
    max_age_days: int = 7
    # A publish retried with the same `Nats-Msg-Id` within this many seconds is stored once.
    duplicate_window_s: int = 600
    # LIMITS: kept until its age; WORK_QUEUE: a message is gone once one consumer acknowledged it.
    retention: RetentionPolicy = RetentionPolicy.LIMITS

    def config(self) -> StreamConfig:
        """The stream as JetStream declares it, on disk."""
        return StreamConfig(
            name=self.name,
            subjects=list(self.subjects),
            retention=self.retention,
            storage=StorageType.FILE,
            max_age=self.max_age_days * DAY,
            duplicate_window=self.duplicate_window_s,
        )


# Every stream the engine publishes to; `ensure_streams` creates (or updates) each from here.
STREAM_TABLE: tuple[Stream, ...] = (
    Stream(subjects.TASKS_STREAM, subjects.TASK_SUBJECTS),
    Stream(subjects.CLAIMS_STREAM, subjects.CLAIM_SUBJECTS),
    # The age is DEAD_LETTER_MAX_AGE_DAYS when created (`retained`); a message parked twice (a
    # re-park after a lost term) is stored once.
    Stream(subjects.DEAD_LETTER_STREAM, subjects.DEAD_LETTER_SUBJECTS, max_age_days=30),
    Stream(subjects.SOURCELISTS_STREAM, subjects.SOURCELIST_SUBJECTS),
    Stream(subjects.REVIEWS_STREAM, subjects.REVIEW_SUBJECTS),
    Stream(subjects.VERIFICATIONS_STREAM, subjects.VERIFY_SUBJECTS),
    # Corpus ingest jobs, one per paper, for any number of ingest workers: a job leaves the stream
    # once a worker has acknowledged it (its paper is written); a killed worker's unacknowledged
    # jobs are delivered again after the consumer's ack wait. A paper queued twice within the
    # duplicate window (same id and content) is stored once.
    Stream(subjects.INGEST_STREAM, subjects.INGEST_SUBJECTS, retention=RetentionPolicy.WORK_QUEUE),
)

STREAMS: tuple[StreamConfig, ...] = (
    *(stream.config() for stream in STREAM_TABLE),
    # Live traces of reviews, verifications and source lists: research_runs owns its limits
    # (per-run caps, direct get), since a process that only records runs creates it too.
    RUNS_STREAM_CONFIG,
)


def retained(config: StreamConfig, max_age_days: float) -> StreamConfig:
    """`config`, with the dead-letter stream's age limit of `max_age_days` (the setting
    `DEAD_LETTER_MAX_AGE_DAYS`, default 30).

    Parked messages keep their bytes (an operator may need them), and those bytes may hold a
    patient's identifiers; the age limit is how long they may stay.
    """
    if config.name != subjects.DEAD_LETTER_STREAM:
        return config
    return dataclasses.replace(config, max_age=max_age_days * DAY)


async def ensure_streams(
    js: JetStreamContext, replicas: int = 1, *, dead_letter_max_age_days: float = 30.0
) -> None:
    """Create every stream, or update it to the declared config; safe to call from every replica.

    `replicas` is each stream's replica count (3 on a cluster, see `nats_seeds.stream_replicas`);
    `dead_letter_max_age_days` how long parked messages keep their bytes (`retained`).
    """
    for declared in STREAMS:
        config = replicated(retained(declared, dead_letter_max_age_days), replicas)
        assert config.name, "every declared stream has a name"
        try:
            await js.stream_info(config.name)
        except NotFoundError:
            try:
                await js.add_stream(config)
                continue
            except Exception:  # noqa: BLE001, S110 - another replica created it between the two calls;
                # update_stream below raises if the stream is truly missing
                pass
        await js.update_stream(config)


async def ensure_streams_at(url: str, settings: Settings) -> None:
    """Connect, ensure streams, disconnect (used by the launcher before services start).

    `url` may list several seeds; the replica count is `settings.nats_stream_replicas`, else
    detected from the server, and the dead-letter age `settings.dead_letter_max_age_days`.
    """
    nc = await connect(url, max_reconnect_attempts=3)
    try:
        await ensure_streams(
            nc.jetstream(),
            stream_replicas(nc, settings.nats_stream_replicas),
            dead_letter_max_age_days=settings.dead_letter_max_age_days,
        )
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
        reconnect_time_wait=0.5,  # type: ignore[arg-type]  # seconds: FastStream says int, nats-py takes a float
        logger=logging.getLogger("faststream.broker"),  # rendered as JSON by the root handler
    )


@dataclasses.dataclass(frozen=True)
class Emits:
    """An event a service publishes on a JetStream stream."""

    subject: str
    stream: str
    schema: type[BaseModel]
    title: str
    description: str


def declare_publishers(broker: NatsBroker, emits: Iterable[Emits]) -> dict[str, Any]:
    """A declared FastStream publisher per event (subject → publisher), listed with its payload
    schema in the service's AsyncAPI document.

    The streams are not declared by FastStream (`declare=False`): `ensure_streams` alone owns their
    configuration, and FastStream's declaration would replace it with its defaults at every start.
    """
    return {
        event.subject: broker.publisher(
            event.subject,
            stream=JStream(event.stream, declare=False),
            timeout=subjects.PUBLISH_TIMEOUT_S,
            schema=event.schema,
            title=event.title,
            description=event.description,
        )
        for event in emits
    }
