"""Read a run's events back from the stream, from any stream sequence on.

`replay(js, run_id, after_seq)` yields `(stream_seq, event)` for every event of the run whose
stream sequence is greater than `after_seq` — the SSE `Last-Event-ID` — so a client that
reconnects gets exactly what it missed: nothing lost, nothing twice.

- `follow=False` reads what is stored and stops (direct gets by subject, no consumer).
- `follow=True` also waits for events still to come and stops after `done` (or after
  `follow_s`). It polls with the same direct gets instead of holding a consumer: a reader keeps
  nothing on the server, so a client that goes leaves nothing behind. (Each stream used to hold
  an ordered consumer, deleted in a `finally` that does not run while the generator is left
  suspended — FastAPI's SSE producer can park it at a `yield` — and 40 streams for unknown runs
  left 11 consumers.) A run that already ended before
  `after_seq` ends at once instead of waiting forever.

A message that is not a valid event (written by hand, an older version) is skipped with a
warning: one bad message must not break every reader of the run.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator
from typing import Final

import anyio
from nats.js import JetStreamContext
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
POLL_S: Final = 0.2  # a busy run's events reach a follower this soon
POLL_IDLE_S: Final = 1.0  # and a quiet run's at most this late


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


async def _read(
    js: JetStreamContext, subject: str, after_seq: int
) -> AsyncIterator[tuple[int, RunEvent | None]]:
    """Every stored message of `subject` after `after_seq`: its stream sequence and its event
    (None for one that is not a valid event)."""
    seq = after_seq + 1
    while True:
        try:
            raw = await js.get_msg(RUNS_STREAM, seq=seq, subject=subject, next=True, direct=True)
        except NotFoundError:
            return
        stream_seq = raw.seq or seq
        yield stream_seq, _parse(raw.data, stream_seq)
        seq = stream_seq + 1


async def _stored(
    js: JetStreamContext, subject: str, after_seq: int
) -> AsyncIterator[tuple[int, RunEvent]]:
    async for stream_seq, event in _read(js, subject, after_seq):
        if event is not None:
            yield stream_seq, event


async def _live(
    js: JetStreamContext, subject: str, after_seq: int, until: float
) -> AsyncIterator[tuple[int, RunEvent]]:
    """Stored events after `after_seq`, then new ones as they are stored, by direct gets: polled
    every `POLL_S` while the run is busy, backing off to `POLL_IDLE_S` while it is quiet."""
    pause = POLL_S
    while True:
        found = False
        async for stream_seq, event in _read(js, subject, after_seq):
            found, after_seq = True, stream_seq  # past a bad message too: it is read once
            if event is None:
                continue
            yield stream_seq, event
            if isinstance(event, RunDone):
                return
        now = time.monotonic()
        if now >= until:
            return
        pause = POLL_S if found else min(POLL_IDLE_S, pause * 2)
        await anyio.sleep(min(pause, until - now))


async def replay(
    js: JetStreamContext,
    run_id: str,
    after_seq: int = 0,
    *,
    follow: bool = False,
    follow_s: float = math.inf,
) -> AsyncIterator[tuple[int, RunEvent]]:
    """Events of `run_id` after stream sequence `after_seq`, in order, as `(stream_seq, event)`.
    With `follow`, keep waiting for new ones until `done`, or for `follow_s` seconds at most.
    Raises ValueError for a run id that is not a single subject token."""
    subject = run_event_subject(run_id)
    if not follow:
        async for item in _stored(js, subject, after_seq):
            yield item
        return
    newest = await last_event(js, run_id)
    if newest is not None and isinstance(newest[1], RunDone) and newest[0] <= after_seq:
        return  # the run is over and the reader has seen all of it
    async for item in _live(js, subject, after_seq, time.monotonic() + follow_s):
        yield item
