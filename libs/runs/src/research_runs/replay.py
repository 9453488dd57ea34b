"""Read a run's events back from the stream, from any stream sequence on.

`replay(js, run_id, after_seq)` yields `(stream_seq, event)` for every event of the run whose
stream sequence is greater than `after_seq` — the SSE `Last-Event-ID` — so a client that
reconnects gets exactly what it missed: nothing lost, nothing twice.

- `follow=False` reads what is stored and stops (direct gets by subject, no consumer).
- `follow=True` also waits for events still to come, through an ordered consumer (ephemeral,
  in memory, recreated by the client on a gap), and stops after `done`. A run that already
  ended before `after_seq` ends at once instead of waiting forever.

A message that is not a valid event (written by hand, an older version) is skipped with a
warning: one bad message must not break every reader of the run.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import anyio
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError
from pydantic import ValidationError

from research_contracts.runs import (
    RUNS_STREAM,
    RunDone,
    RunEvent,
    parse_run_event,
    run_event_subject,
)

log = logging.getLogger(__name__)


def _parse(data: bytes | None, stream_seq: int) -> RunEvent | None:
    try:
        return parse_run_event(data or b"")
    except ValidationError as exc:
        log.warning("skipping run event at stream sequence %s: %s", stream_seq, exc.errors()[:1])
        return None


async def last_event(js: JetStreamContext, run_id: str) -> tuple[int, RunEvent] | None:
    """The newest stored event of `run_id` with its stream sequence, or None for no events."""
    try:
        raw = await js.get_msg(RUNS_STREAM, subject=run_event_subject(run_id), direct=True)
    except NotFoundError:
        return None
    event = _parse(raw.data, raw.seq or 0)
    return None if event is None else (raw.seq or 0, event)


async def _stored(
    js: JetStreamContext, subject: str, after_seq: int
) -> AsyncIterator[tuple[int, RunEvent]]:
    seq = after_seq + 1
    while True:
        try:
            raw = await js.get_msg(RUNS_STREAM, seq=seq, subject=subject, next=True, direct=True)
        except NotFoundError:
            return
        stream_seq = raw.seq or seq
        event = _parse(raw.data, stream_seq)
        if event is not None:
            yield stream_seq, event
        seq = stream_seq + 1


async def _live(
    js: JetStreamContext, subject: str, after_seq: int
) -> AsyncIterator[tuple[int, RunEvent]]:
    config = (
        ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after_seq + 1)
        if after_seq > 0
        else ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    )
    sub = await js.subscribe(
        subject, stream=RUNS_STREAM, ordered_consumer=True, config=config, inactive_threshold=30.0
    )
    try:
        async for msg in sub.messages:
            stream_seq = msg.metadata.sequence.stream
            if stream_seq <= after_seq:  # a recreated ordered consumer may repeat its start
                continue
            event = _parse(msg.data, stream_seq)
            if event is None:
                continue
            after_seq = stream_seq
            yield stream_seq, event
            if isinstance(event, RunDone):
                return
    finally:
        # The reader may be gone (an SSE client disconnected, so this runs while cancelled):
        # shield the clean-up, and delete the consumer now rather than leave one per abandoned
        # connection until the server's inactivity threshold.
        with anyio.CancelScope(shield=True):
            try:
                consumer = (await sub.consumer_info()).name
                await sub.unsubscribe()
                await js.delete_consumer(RUNS_STREAM, consumer)
            except Exception:  # the connection may be closing; the consumer expires on its own
                log.debug("clean-up of a run-event reader failed", exc_info=True)


async def replay(
    js: JetStreamContext, run_id: str, after_seq: int = 0, *, follow: bool = False
) -> AsyncIterator[tuple[int, RunEvent]]:
    """Events of `run_id` after stream sequence `after_seq`, in order, as `(stream_seq, event)`.
    With `follow`, keep waiting for new ones until `done`. Raises ValueError for a run id that
    is not a single subject token."""
    subject = run_event_subject(run_id)
    if not follow:
        async for item in _stored(js, subject, after_seq):
            yield item
        return
    newest = await last_event(js, run_id)
    if newest is not None and isinstance(newest[1], RunDone) and newest[0] <= after_seq:
        return  # the run is over and the reader has seen all of it
    async for item in _live(js, subject, after_seq):
        yield item
