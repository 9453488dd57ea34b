"""`research_platform.app.service_app` runs a mode service whole: the scout's app (built on it, with its
scheduler and operator controls beside the request subscriber) starts on real NATS + Postgres,
answers an operator verb, and stops cleanly."""

from __future__ import annotations

import pytest

from research_contracts import subjects
from research_contracts.messages import ControlReply, ControlRequest
from research_scout.main import create_app
from research_scout.settings import ScoutServiceSettings
from tests.agents.apps import ask

pytestmark = pytest.mark.integration


async def test_the_scout_app_starts_answers_its_controls_and_stops(servers, nc) -> None:
    app = create_app(
        ScoutServiceSettings(nats_url=servers.nats_url, database_url=servers.database_url)
    )
    async with app.lifespan_context():
        await app.start()
        try:
            msg = await ask(
                nc,
                subjects.control_subject("scout", "status"),
                ControlRequest().model_dump_json().encode(),
                timeout=10,
            )
        finally:
            await app.stop()
    reply = ControlReply.model_validate_json(msg.data)
    assert reply.status == 200 and reply.state in ("idle", "running")
