"""The JetStream stream that holds run events, with limits so a busy engine cannot fill the disk.

Run events are a trace, not a record of truth (reports and verdicts live in Postgres), so the
stream keeps them for a week, caps each run's subject and the whole stream, and discards the
oldest first. `allow_direct` lets readers fetch by subject and sequence without a consumer —
that is how a finished run is replayed.
"""

from __future__ import annotations

from typing import Final

from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from research_contracts.runs import RUN_EVENT_SUBJECTS, RUNS_STREAM

RUN_EVENTS_MAX_AGE_S: Final = 7 * 24 * 3600
RUN_EVENTS_PER_RUN: Final = 20_000  # a review with two rounds emits a few hundred
RUN_EVENTS_MAX_BYTES: Final = 1024**3
RUN_EVENT_MAX_MSG_BYTES: Final = 512 * 1024
DUPLICATE_WINDOW_S: Final = 120.0

RUNS_STREAM_CONFIG: Final = StreamConfig(
    name=RUNS_STREAM,
    description="Live traces of long jobs (reviews, verifications, source lists), served as SSE.",
    subjects=list(RUN_EVENT_SUBJECTS),
    retention=RetentionPolicy.LIMITS,
    storage=StorageType.FILE,
    discard=DiscardPolicy.OLD,
    max_age=RUN_EVENTS_MAX_AGE_S,
    max_msgs_per_subject=RUN_EVENTS_PER_RUN,
    max_bytes=RUN_EVENTS_MAX_BYTES,
    max_msg_size=RUN_EVENT_MAX_MSG_BYTES,
    duplicate_window=DUPLICATE_WINDOW_S,
    allow_direct=True,
)


async def ensure_runs_stream(js: JetStreamContext) -> None:
    """Create the runs stream or bring it to the declared limits; safe from every replica.
    (Services get it from the platform's `ensure_streams`; this is for a process that only records runs.)"""
    try:
        await js.stream_info(RUNS_STREAM)
    except NotFoundError:
        try:
            await js.add_stream(RUNS_STREAM_CONFIG)
            return
        except Exception:  # noqa: BLE001, S110 - another replica created it between the two calls;
            # update_stream below raises if the stream is truly missing
            pass
    await js.update_stream(RUNS_STREAM_CONFIG)
