"""A stop never hangs: the consumer-lag reader ends when its stop lands as a reply arrives (the race
that hung the metrics tests under load), and a stop that cannot finish is left behind after its bound."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from structlog.testing import capture_logs

from research_platform.metrics import ConsumerLag
from research_platform.shutdown import cancel_within, running, stop_within

pytestmark = pytest.mark.unit


class _Replies:
    """`broker.connection.jetstream()` whose `consumer_info` waits for its reply as nats' request does
    (`asyncio.wait_for` on a future the read loop completes); the test decides when the reply arrives."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.reply: asyncio.Future[SimpleNamespace] | None = None
        self.connection = self

    def jetstream(self) -> _Replies:
        return self

    async def consumer_info(self, stream: str, durable: str) -> SimpleNamespace:
        self.reply = asyncio.get_running_loop().create_future()
        self.asked.set()
        return await asyncio.wait_for(self.reply, 5)


async def test_the_lag_reader_stops_when_its_stop_lands_as_a_reply_arrives() -> None:
    replies = _Replies()
    lag = ConsumerLag(replies, [("TASKS", "lag-durable")], interval_s=0.05)  # type: ignore[arg-type]  # a stand-in connection whose reply the test times
    await lag.start()
    task = lag._task
    await replies.asked.wait()
    assert replies.reply is not None
    replies.reply.set_result(
        SimpleNamespace(num_pending=2, num_ack_pending=0)
    )  # the reply arrives …
    started = time.monotonic()
    with capture_logs() as logs:
        await asyncio.wait_for(lag.stop(), 3)  # … in the instant the stop cancels the read
    took = time.monotonic() - started
    assert took < 1.0, f"the stop took {took:.1f}s: the loop ran on after its cancellation"
    assert task is not None and task.done()
    assert not [e for e in logs if e["event"].startswith("stop did not finish")], (
        "ended by itself, not left behind"
    )


class _Stubborn:
    """A stop that swallows every cancellation until released (as a swallowed `cancel()` looks)."""

    def __init__(self) -> None:
        self.released = asyncio.Event()
        self.cancels = 0

    async def stop(self) -> None:
        while not self.released.is_set():
            try:
                await self.released.wait()
            except asyncio.CancelledError:
                self.cancels += 1


async def test_a_stop_that_cannot_finish_is_logged_and_left_behind_after_its_bound() -> None:
    stubborn = _Stubborn()
    started = time.monotonic()
    with capture_logs() as logs:
        finished = await stop_within(stubborn.stop(), what="stubborn app", timeout_s=0.3)
    took = time.monotonic() - started
    stubborn.released.set()  # let the task left behind end, so it does not outlive the test
    await asyncio.sleep(0)
    assert finished is False and 0.3 <= took < 1.5
    assert stubborn.cancels == 1, "cancelled once when left behind"
    [warning] = [e for e in logs if e["event"] == "stop did not finish in time; left behind"]
    assert warning["what"] == "stubborn app" and "in stop" in warning["waiting_in"]


async def test_a_stop_that_finishes_returns_true_and_its_error_reaches_the_caller() -> None:
    async def clean() -> None:
        await asyncio.sleep(0.01)

    async def broken() -> None:
        raise ConnectionResetError("Connection lost")

    assert await stop_within(clean(), what="clean", timeout_s=1) is True
    with pytest.raises(ConnectionResetError):
        await stop_within(broken(), what="broken", timeout_s=1)


async def test_cancel_within_ends_a_loop_and_bounds_one_that_swallows_the_cancel() -> None:
    async def ticking() -> None:
        while True:
            await asyncio.sleep(0.01)

    assert await cancel_within(asyncio.create_task(ticking()), what="ticks", timeout_s=1) is True
    stubborn = _Stubborn()
    task = asyncio.create_task(stubborn.stop())
    await asyncio.sleep(0)
    with capture_logs():
        assert await cancel_within(task, what="stubborn loop", timeout_s=0.2) is False
    stubborn.released.set()
    await asyncio.wait_for(task, 1)


async def test_a_loop_run_beside_a_block_ticks_inside_it_and_is_stopped_on_the_way_out() -> None:
    ticks: list[int] = []
    stopped = asyncio.Event()

    async def ticking() -> None:
        try:
            while True:
                ticks.append(len(ticks))
                await asyncio.sleep(0.01)
        finally:
            stopped.set()

    async with running(ticking(), what="ticks"):
        while len(ticks) < 3:
            await asyncio.sleep(0.01)
        assert not stopped.is_set()
    assert stopped.is_set()
    after = len(ticks)
    await asyncio.sleep(0.05)
    assert len(ticks) == after  # no tick after the block
