"""Bounded shutdown: a stop that cannot finish in time is logged and left behind, never waited on forever.

Why a stop can hang: on Python 3.11 `asyncio.wait_for` returns its result instead of raising when
the task awaiting it is cancelled in the instant the awaited reply arrives (CPython gh-86296,
bpo-42130; 3.12 rebuilt `wait_for` on `asyncio.timeout`). nats-py waits for every request's reply with `wait_for`, so a loop that asks
NATS (`while True: await js.consumer_info(...); await asyncio.sleep(...)`) can swallow the one
`cancel()` a stop sends and run on, and `task.cancel(); await task` then never returns. Under CPU
load the window is wide enough to be hit: the consumer-lag reader did it after 14 and after 43
start/stop rounds beside two busy loops, and the FastStream app's stop waited on it until
pytest-timeout killed the test.

So a loop that can be stopped also checks a stop flag of its own (see `metrics.ConsumerLag`), and
whoever waits for a stop waits through `stop_within` / `cancel_within`: at most `timeout_s`,
then a warning naming the stop and where it waits, and the caller moves on. A loop held beside a
service for its lifetime (the reviewer's stale sweep, the replicator's dispatchers) runs in
`async with running(loop, what=...)`, which stops it that way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from research_platform.logging import get_logger

log = get_logger(__name__)


def _waiting_in(task: asyncio.Task[Any]) -> str:
    """The innermost frame `task` is suspended in, as `file:line in function` (best effort)."""
    frames = task.get_stack()
    if not frames:
        return "unknown"
    frame = frames[-1]
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


async def _ended_within(task: asyncio.Task[Any], what: str, timeout_s: float) -> bool:
    """Wait for `task` for at most `timeout_s`; True when it ended (its error raised here, a
    cancellation excepted), else a warning, one more `cancel()` and False (never awaited again)."""
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task in done:
        if not task.cancelled():
            task.result()
        return True
    log.warning(
        "stop did not finish in time; left behind",
        what=what,
        timeout_s=timeout_s,
        waiting_in=_waiting_in(task),
    )
    task.cancel()
    return False


async def stop_within(stop: Awaitable[Any], *, what: str, timeout_s: float) -> bool:
    """Run `stop` (an `app.stop()`, a lifespan's exit) as a task of its own; wait for it for at
    most `timeout_s` seconds.

    True when it finished; its exception, if any, is raised here. False when it did not: a warning
    names `what` and the frame it waits in, the task is cancelled and left behind — not awaited, as
    a task that swallowed one cancellation may swallow the next — and the caller goes on.
    """
    return await _ended_within(asyncio.ensure_future(stop), what, timeout_s)


async def cancel_within(task: asyncio.Task[Any], *, what: str, timeout_s: float) -> bool:
    """Cancel `task` (a background loop) and wait for it to end for at most `timeout_s` seconds,
    as `stop_within` does."""
    task.cancel()
    return await _ended_within(task, what, timeout_s)


@asynccontextmanager
async def running(
    loop: Coroutine[Any, Any, Any], *, what: str, timeout_s: float = 10.0
) -> AsyncIterator[None]:
    """Run `loop` (a background loop: a sweep, a dispatcher) as a task while the block runs, and
    cancel it on the way out through `cancel_within` (waiting at most `timeout_s`)."""
    task = asyncio.get_running_loop().create_task(loop)
    try:
        yield
    finally:
        await cancel_within(task, what=what, timeout_s=timeout_s)
