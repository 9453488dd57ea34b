"""Correlator service (periodic agent). Thin for now: connects, answers its status, shuts down cleanly."""

from __future__ import annotations

from faststream import FastStream

from research_contracts import ControlReply, subjects
from research_platform.broker import make_broker
from research_platform.service import run_service
from research_platform.settings import Settings

SERVICE = "correlator"


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)

    @broker.subscriber(subjects.control_subject(SERVICE, "status"), queue=SERVICE)
    async def on_status() -> ControlReply:
        return ControlReply(state="idle")

    return FastStream(broker)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
