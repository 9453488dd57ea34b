"""Critic service: the composition root (broker, lifespan, subscribers); the service layer is
`pipeline.py` (`Critic`).

consume `research.claim.pending` (a `ClaimProposed`, validated by FastStream; acknowledgement,
retry and dead-letter are `research_platform.delivery.Delivery`) → `Critic.handle_pending`
(prepare → experiment → reshape → `ledger.verdicts.decide`) → `research.claim.decided`, through
the ledger's outbox (`research_ledger.outbox`, its relay runs beside the service).
`research.claim.recritique` (from the replicator) judges an active claim again;
`research.control.critic.drain` (request/reply, the admin route) releases quarantined claims.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import FastStream

from research_contracts import (
    ClaimDecided,
    ClaimProposed,
    ControlReply,
    ControlRequest,
    RecritiqueClaim,
    subjects,
)
from research_critic.bootstrap import bootstrap
from research_critic.pipeline import Critic
from research_critic.repository import SERVICE
from research_critic.settings import CriticServiceSettings
from research_ledger import Ledger, dead_letters
from research_ledger.outbox import relay_beside
from research_platform.app import Consumes, Pool, ServiceContext, service_app
from research_platform.broker import Emits
from research_platform.db import session_factory, without_transactions
from research_platform.replies import empty_is_object, refusing
from research_platform.service import run_service

EMITS = (
    Emits(
        subjects.CLAIM_DECIDED,
        subjects.CLAIMS_STREAM,
        ClaimDecided,
        "critic.claim_decided",
        "A judged claim's new status (active, rejected, critic_quarantine; superseded claims named in "
        "`supersedes`), for the reviewer's stale sweep (`Nats-Msg-Id` `claim-decided-<claim_id>-<status>`).",
    ),
    Emits(
        subjects.CLAIM_PENDING,
        subjects.CLAIMS_STREAM,
        ClaimProposed,
        "critic.claim_released",
        "A claim an operator drained from critic_quarantine, proposed again for judgement "
        "(`Nats-Msg-Id` per drain and claim).",
    ),
)


def create_app(settings: CriticServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    concurrency = settings.critic.concurrency

    @asynccontextmanager
    async def build(ctx: ServiceContext[CriticServiceSettings, Critic]) -> AsyncIterator[Critic]:
        # The reads before a judgement need no transaction: `decide` checks the claim is still
        # pending and its entity unchanged (`EntityChanged`) in the transaction that writes.
        yield Critic(
            Ledger(ctx.sessions, read_sessions=session_factory(without_transactions(ctx.engine))),
            settings,
            deps.llm.chain(),
        )

    app, ctx = service_app(
        settings,
        SERVICE,
        build,
        emits=EMITS,
        dead_letters=dead_letters.recorder,
        pool=Pool(size=concurrency + 2, pre_ping=False),
    )
    ctx.run_beside(relay_beside)  # publishes the decisions after their commits

    @ctx.consume(
        Consumes(
            subjects.CLAIM_PENDING,
            subjects.CLAIMS_STREAM,
            subjects.CRITIC_PENDING_DURABLE,
            title="critic.pending",
            description="Pending claims to judge (ClaimProposed JSON).",
            max_workers=concurrency,
        )
    )
    async def on_pending(proposed: ClaimProposed) -> None:
        await ctx.service.handle_pending(proposed)

    @ctx.consume(
        Consumes(
            subjects.CLAIM_RECRITIQUE,
            subjects.CLAIMS_STREAM,
            subjects.CRITIC_RECRITIQUE_DURABLE,
            title="critic.recritique",
            description="Active claims to judge again (RecritiqueClaim JSON, from the replicator).",
            max_workers=1,
        )
    )
    async def on_recritique(command: RecritiqueClaim) -> None:
        await ctx.service.handle_recritique(command)

    controls = refusing(
        lambda exc: ControlReply(
            status=400, detail={"error": f"invalid drain request: {exc.errors(include_url=False)}"}
        )
    )

    @controls.subscriber(
        subjects.CRITIC_DRAIN,
        queue=subjects.CRITIC_QUEUE,
        title="critic.drain",
        decoder=empty_is_object,
    )
    async def on_drain(request: ControlRequest) -> ControlReply:
        """Operator verb (admin route): release claims from critic_quarantine (all, or `args.claim_ids`)."""
        return await ctx.service.drain(request)

    ctx.broker.include_router(controls)
    return app


def run() -> None:
    run_service(SERVICE, create_app, CriticServiceSettings)


if __name__ == "__main__":
    run()
