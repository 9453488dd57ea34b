"""A JetStream ack that comes late is waited for: a publish is not a 503 when the server is slow.

FastStream waits 0.5 s for a publish's ack unless told otherwise; on a busy machine the gateway
answered 503 "the bus is unavailable" with the server up (`bench:sourcelist`, 12 of 102 lists).
Here a private nats-server has no stream on the subject and a plain subscriber answers the
publish in a stream's place, 1.5 s late.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from nats.aio.msg import Msg

from research_contracts import subjects
from research_contracts.reviews import RequestReview
from research_gateway.bus import build_bus
from research_gateway.deps import publish_or_503
from research_platform.embedded import EmbeddedNats
from research_platform.nats_seeds import connect

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

LATE_S = 1.5


async def test_a_command_acked_late_is_published_not_refused(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path).start()
    nc = await connect(server.url)
    bus = build_bus(server.url)
    received: list[bytes] = []

    async def late_stream(msg: Msg) -> None:
        received.append(msg.data)
        await asyncio.sleep(LATE_S)
        await msg.respond(json.dumps({"stream": subjects.REVIEWS_STREAM, "seq": 1}).encode())

    try:
        await nc.subscribe(subjects.REVIEW_REQUESTED, cb=late_stream)
        await nc.flush()
        await bus.broker.connect()
        command = RequestReview(topic="neutrophil extracellular traps in rheumatoid arthritis")
        await publish_or_503(bus.reviews, command, msg_id="late-ack", what="review")
        assert len(received) == 1
        assert RequestReview.model_validate_json(received[0]).topic == command.topic
    finally:
        await bus.broker.stop()
        await nc.close()
        server.stop()
