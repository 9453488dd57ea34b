"""Bounded teardown for fixtures: a stop (an app's, a broker's, a lifespan's exit) that cannot finish
within `TEARDOWN_S` is logged and left behind, so a fixture never hangs until pytest-timeout.

Built on `research_platform.shutdown.stop_within`; its module doc says how a stop came to hang.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

from research_platform.shutdown import stop_within

T = TypeVar("T")

# Above a healthy stop on a loaded machine (a NATS drain waits up to 30 s, its flush 10 s more),
# well below the 600 s test timeout.
TEARDOWN_S = 60.0


async def stopped(stop: Awaitable[Any], what: str) -> bool:
    """`await stop`, for at most `TEARDOWN_S`; False (and a warning) when it was left behind."""
    return await stop_within(stop, what=what, timeout_s=TEARDOWN_S)


@asynccontextmanager
async def left_within(context: AbstractAsyncContextManager[T], what: str) -> AsyncIterator[T]:
    """Enter `context` (a lifespan) as `async with` would; leave it through `stopped`."""
    entered = await context.__aenter__()
    try:
        yield entered
    except BaseException as exc:
        await stopped(context.__aexit__(type(exc), exc, exc.__traceback__), what)
        raise
    await stopped(context.__aexit__(None, None, None), what)
