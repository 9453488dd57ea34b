"""Verifier service: claim verification on the bus.

Subscriber `research.verify.requested` — durable pull consumer `verifier-requests` (stream
`RESEARCH_VERIFICATIONS`): a `RequestVerification` is verified (`pipeline`), traced on
`research.run.<run_id>.event`, stored as a report of kind `verification`. Publishing a
`RequestVerification` JSON here is a supported interface (the gateway and the replicator's
watched-claim schedule do the same). A watched claim whose verdict moved is announced on
`research.verification.changed`.

Engines: the offline passage classifier by default (no network, no key); with a remote LLM
provider configured the passages are labelled by the provider chain (`llm.LlmEngine`) — the
verdict rule is the same. Delivery (ack / retry / dead letter + audit) is `Delivery`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, PullSub

from research_contracts import subjects
from research_contracts.verifications import RequestVerification
from research_ledger import dead_letters
from research_llm import build_chain
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory
from research_platform.delivery import Delivery
from research_platform.service import run_service
from research_verifier.experiment import OfflineEngine
from research_verifier.llm import LlmEngine, remote_configured
from research_verifier.pipeline import VerificationService
from research_verifier.repository import SERVICE
from research_verifier.settings import VerifierServiceSettings
from research_verifier.tools import BusEvidence


def create_app(settings: VerifierServiceSettings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    delivery = Delivery.install(broker, service=SERVICE, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s)
    state: dict[str, Any] = {}
    config = settings.verifier

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        sessions = session_factory(engine)
        delivery.record = dead_letters.recorder(sessions, SERVICE)
        chain = build_chain(settings.llm)
        labeller = LlmEngine(chain, config.llm_timeout_s) if remote_configured(chain) else OfflineEngine()
        state["service"] = VerificationService(
            broker=broker, sessions=sessions, settings=config, engine=labeller,
            port=BusEvidence(lambda: broker.connection, timeout_s=config.tool_timeout_s),
        )
        yield
        await engine.dispose()

    @broker.subscriber(
        subjects.VERIFY_REQUESTED,
        stream=JStream(subjects.VERIFICATIONS_STREAM, declare=False),
        durable=subjects.VERIFIER_REQUESTS_DURABLE,
        config=ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver),
        pull_sub=PullSub(batch_size=config.concurrency, timeout=2.0),
        ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
        title="verifier.requests",
        description=(
            f"Claim verification requests: publish a RequestVerification JSON on `{subjects.VERIFY_REQUESTED}` "
            f"(JetStream stream {subjects.VERIFICATIONS_STREAM}; set a `Nats-Msg-Id`). Bad input is dead-lettered."
        ),
    )
    async def on_verify(command: RequestVerification) -> None:
        """Verify one claim: parse, search, classify, qualify, report, store."""
        await state["service"].handle(command)

    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app, VerifierServiceSettings)


if __name__ == "__main__":
    run()
