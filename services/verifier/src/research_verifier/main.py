"""Verifier service: claim verification on the bus.

Subscriber `research.verify.requested` — durable pull consumer `verifier-requests` (stream
`RESEARCH_VERIFICATIONS`): a `RequestVerification` is verified (`pipeline`), traced on
`research.run.<run_id>.event`, stored as a report of kind `verification`. Publishing a
`RequestVerification` JSON here is a supported interface (the gateway and the replicator's
watched-claim schedule do the same). A watched claim whose verdict moved is announced on
`research.verification.changed`.

Engines: the offline engine by default — the trained judgement models, relevance + stance
(`research_judgement`; no network, no key); with a remote LLM
provider configured the passages are labelled by the provider chain (`llm.LlmEngine`) — the
verdict rule is the same. The broker, delivery (ack / retry / dead letter + audit), lifespan and
request subscriber are `research_modes.app.mode_app`'s; the connector client is
`research_modes.ConnectorClient`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream

from research_contracts import subjects
from research_contracts.verifications import RequestVerification, VerificationChanged
from research_llm import build_chain
from research_modes import ConnectorClient, choose
from research_modes.app import ModeContext, Requests, mode_app
from research_platform.broker import Emits
from research_platform.service import run_service
from research_verifier.experiment import Engine, OfflineEngine
from research_verifier.llm import LlmEngine
from research_verifier.pipeline import VerificationService
from research_verifier.repository import SERVICE
from research_verifier.settings import VerifierServiceSettings


def create_app(settings: VerifierServiceSettings) -> FastStream:
    config = settings.verifier

    @asynccontextmanager
    async def build(ctx: ModeContext) -> AsyncIterator[VerificationService]:
        assert ctx.sessions is not None
        broker = ctx.broker
        chain = build_chain(settings.llm)

        def remote() -> Engine:
            return LlmEngine(chain, config.llm_timeout_s)

        def offline() -> Engine:
            return OfflineEngine(papers=config.judged_papers, evidence_model=config.evidence_model)

        engine = choose(chain, remote, offline)
        yield VerificationService(
            broker=broker,
            sessions=ctx.sessions,
            settings=config,
            engine=engine,
            port=ConnectorClient(lambda: broker.connection, timeout_s=config.tool_timeout_s),
            changes=ctx.publishers[subjects.VERIFICATION_CHANGED],
        )

    app, _ = mode_app(
        settings,
        SERVICE,
        Requests(
            subject=subjects.VERIFY_REQUESTED,
            stream=subjects.VERIFICATIONS_STREAM,
            durable=subjects.VERIFIER_REQUESTS_DURABLE,
            command=RequestVerification,
            handler="on_verify",
            title="verifier.requests",
            batch_size=config.concurrency,
            description=(
                f"Claim verification requests: publish a RequestVerification JSON on `{subjects.VERIFY_REQUESTED}` "
                f"(JetStream stream {subjects.VERIFICATIONS_STREAM}; set a `Nats-Msg-Id`). Bad input is dead-lettered."
            ),
            summary="Verify one claim: parse, search, judge, qualify, report, store.",
        ),
        build,
        emits=(
            Emits(
                subjects.VERIFICATION_CHANGED,
                subjects.VERIFICATIONS_STREAM,
                VerificationChanged,
                "verifier.verification_changed",
                "A watched claim's re-verification moved its verdict or confidence, or an earlier source is "
                "now retracted (`Nats-Msg-Id` per run).",
            ),
        ),
    )
    return app


def run() -> None:
    run_service(SERVICE, create_app, VerifierServiceSettings)


if __name__ == "__main__":
    run()
