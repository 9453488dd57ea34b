"""Verifier service: claim verification on the bus.

Subscriber `research.verify.requested` — durable pull consumer `verifier-requests` (stream
`RESEARCH_VERIFICATIONS`): a `RequestVerification` is verified (`pipeline`), traced on
`research.run.<run_id>.event`, stored as a report of kind `verification`. Publishing a
`RequestVerification` JSON here is a supported interface (the gateway and the replicator's
watched-claim schedule do the same). A watched claim whose verdict moved is announced on
`research.verification.changed`.

Engines: the offline engine decides — the trained judgement models, relevance + stance
(`research_judgement`; no network, no key); with a remote LLM provider configured it checks the
quotes a verdict rests on, a veto only (`veto.LlmCheck`, `VERIFIER__LLM_ROLE=check`, the default),
or labels the passages itself (`llm.LlmEngine`, `label`) — the verdict rule is the same
(`research_llm.choose_engine`). The broker, delivery (ack / retry / dead
letter + audit), lifespan and declared publishers are `research_platform.app.service_app`'s; the
connector client is `research_modes.ConnectorClient`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream

from research_contracts import subjects
from research_contracts.verifications import RequestVerification, VerificationChanged
from research_ledger import Ledger
from research_modes import ConnectorClient
from research_modes.app import mode_app
from research_platform.app import Consumes, ServiceContext
from research_platform.broker import Emits
from research_platform.service import run_service
from research_verifier.bootstrap import bootstrap
from research_verifier.experiment import Engine, OfflineEngine
from research_verifier.llm import LlmEngine
from research_verifier.pipeline import VerificationService
from research_verifier.repository import SERVICE
from research_verifier.settings import VerifierServiceSettings
from research_verifier.veto import LlmCheck

EMITS = (
    Emits(
        subjects.VERIFICATION_CHANGED,
        subjects.VERIFICATIONS_STREAM,
        VerificationChanged,
        "verifier.verification_changed",
        "A watched claim's re-verification moved its verdict or confidence, or an earlier source is "
        "now retracted (`Nats-Msg-Id` per run).",
    ),
)


def create_app(settings: VerifierServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    config = settings.verifier

    @asynccontextmanager
    async def build(
        ctx: ServiceContext[VerifierServiceSettings, VerificationService],
    ) -> AsyncIterator[VerificationService]:
        broker = ctx.broker

        def offline() -> OfflineEngine:
            return OfflineEngine(papers=config.judged_papers, evidence_model=config.evidence_model)

        policy = deps.llm
        check: LlmCheck | None = None
        if config.llm_role == "check":  # the judge decides; a configured LLM may only veto
            engine: Engine = offline()
            check = policy.choose(
                remote=lambda chain: LlmCheck(chain, config.llm_timeout_s),
                offline=lambda: None,
            )
        else:
            engine = policy.choose(
                remote=lambda chain: LlmEngine(chain, config.llm_timeout_s),
                offline=offline,
            )
        yield VerificationService(
            broker=broker,
            ledger=Ledger(ctx.sessions),
            settings=config,
            engine=engine,
            check=check,
            port=ConnectorClient(lambda: broker.connection, timeout_s=config.tool_timeout_s),
            run_events=ctx.run_events,
        )

    app, _ = mode_app(
        settings,
        SERVICE,
        build,
        emits=EMITS,
        requests=Consumes(
            subjects.VERIFY_REQUESTED,
            subjects.VERIFICATIONS_STREAM,
            subjects.VERIFIER_REQUESTS_DURABLE,
            title="verifier.requests",
            description=(
                f"Claim verification requests: publish a RequestVerification JSON on `{subjects.VERIFY_REQUESTED}` "
                f"(JetStream stream {subjects.VERIFICATIONS_STREAM}; set a `Nats-Msg-Id`). Bad input is dead-lettered."
            ),
            batch_size=config.concurrency,
        ),
        command=RequestVerification,
    )

    return app


def run() -> None:
    run_service(SERVICE, create_app, VerifierServiceSettings)


if __name__ == "__main__":
    run()
