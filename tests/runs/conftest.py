from __future__ import annotations

import nats
import pytest
from nats.js import JetStreamContext

from research_runs import ensure_runs_stream


@pytest.fixture
async def js(nc: nats.NATS) -> JetStreamContext:
    """JetStream with the run-events stream (not yet in the platform's ensure_streams)."""
    context = nc.jetstream()
    await ensure_runs_stream(context)
    return context
