"""Run a service's FastStream app inside a test, against the real servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import nats
from faststream import FastStream
from nats.aio.msg import Msg
from nats.errors import NoRespondersError

from tests.teardown import left_within, stopped


@asynccontextmanager
async def running(app: FastStream) -> AsyncIterator[FastStream]:
    """Enter the app's lifespan, start its broker and subscribers; stop both on exit, each within
    `TEARDOWN_S` (a stop that cannot finish is logged and left behind, see tests/teardown.py)."""
    async with left_within(app.lifespan_context(), "in-process app's lifespan"):
        await app.start()
        # Subscriptions reach the server when the client flushes: without it a request sent at once
        # from another connection can find no responder yet.
        for broker in getattr(app, "brokers", None) or [app.broker]:
            await broker.connection.flush()
        try:
            yield app
        finally:
            await stopped(app.stop(), "in-process app's stop")


async def ask(
    nc: nats.NATS, subject: str, payload: bytes, timeout: float, ready_within: float = 10.0
) -> Msg:
    """`nc.request`, asked again while nobody answers yet (NoRespondersError) for up to `ready_within` s.

    A just-started app's subscriptions were seen, twice in many runs, to reach the server only after
    a request sent at once from another connection, flush or not; a service asking another one that
    is starting retries the same way (research_modes' no-responder policy)."""
    deadline = asyncio.get_running_loop().time() + ready_within
    while True:
        try:
            return await nc.request(subject, payload, timeout=timeout)
        except NoRespondersError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)
