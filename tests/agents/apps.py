"""Run a service's FastStream app inside a test, against the real servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream


@asynccontextmanager
async def running(app: FastStream) -> AsyncIterator[FastStream]:
    """Enter the app's lifespan, start its broker and subscribers; stop both on exit."""
    async with app.lifespan_context():
        await app.start()
        # Subscriptions reach the server when the client flushes: without it a request sent at once
        # from another connection can find no responder yet.
        for broker in getattr(app, "brokers", None) or [app.broker]:
            await broker.connection.flush()
        try:
            yield app
        finally:
            await app.stop()
