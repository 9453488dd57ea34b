"""Critic service: the composition root (broker, lifespan, subscribers); the service layer is
`pipeline.py` (`Critic`).

consume `research.claim.pending` (a `ClaimProposed`, validated by FastStream; acknowledgement,
retry and dead-letter are `research_platform.delivery.Delivery`) → `Critic.handle_pending`
(prepare → experiment → reshape → `ledger.verdicts.decide`) → publish `research.claim.decided`.
`research.claim.recritique` (from the replicator) judges an active claim again;
`research.control.critic.drain` (request/reply, the admin route) releases quarantined claims.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, PullSub

from research_contracts import (
    ClaimDecided,
    ClaimProposed,
    ControlReply,
    ControlRequest,
    RecritiqueClaim,
    subjects,
)
from research_critic.pipeline import Critic
from research_critic.repository import SERVICE
from research_ledger import dead_letters
from research_llm import build_chain
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory, without_transactions
from research_platform.delivery import Delivery
from research_platform.replies import empty_is_object, refusing
from research_platform.service import run_service
from research_platform.settings import Settings


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    delivery = Delivery.install(
        broker, service=SERVICE, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s
    )
    state: dict[str, Critic] = {}
    decided = broker.publisher(
        subjects.CLAIM_DECIDED,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        schema=ClaimDecided,
        title="critic.claim_decided",
        description="A judged claim's new status (active, rejected, critic_quarantine; superseded claims named in "
        "`supersedes`), for the reviewer's stale sweep (`Nats-Msg-Id` `claim-decided-<claim_id>-<status>`).",
    )
    proposed = broker.publisher(
        subjects.CLAIM_PENDING,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        schema=ClaimProposed,
        title="critic.claim_released",
        description="A claim an operator drained from critic_quarantine, proposed again for judgement "
        "(`Nats-Msg-Id` per drain and claim).",
    )
    controls = refusing(
        lambda exc: ControlReply(
            status=400, detail={"error": f"invalid drain request: {exc.errors(include_url=False)}"}
        )
    )

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(
            settings.require_database_url(),
            pool_size=settings.critic.concurrency + 2,
            pre_ping=False,
        )
        sessions = session_factory(engine)
        delivery.record = dead_letters.recorder(sessions, SERVICE)
        # The reads before a judgement need no transaction: `decide` checks the claim is still
        # pending and its entity unchanged (`EntityChanged`) in the transaction that writes.
        state["critic"] = Critic(
            decided,
            proposed,
            sessions,
            settings,
            build_chain(settings.llm),
            reads=session_factory(without_transactions(engine)),
        )
        yield
        await engine.dispose()

    @broker.subscriber(
        subjects.CLAIM_PENDING,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        durable=subjects.CRITIC_PENDING_DURABLE,
        config=ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver),
        pull_sub=PullSub(batch_size=1, timeout=2.0),
        max_workers=settings.critic.concurrency,
        ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
        title="critic.pending",
        description="Pending claims to judge (ClaimProposed JSON).",
    )
    async def on_pending(proposed: ClaimProposed) -> None:
        await state["critic"].handle_pending(proposed)

    @broker.subscriber(
        subjects.CLAIM_RECRITIQUE,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        durable=subjects.CRITIC_RECRITIQUE_DURABLE,
        config=ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver),
        pull_sub=PullSub(batch_size=1, timeout=2.0),
        max_workers=1,
        ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
        title="critic.recritique",
        description="Active claims to judge again (RecritiqueClaim JSON, from the replicator).",
    )
    async def on_recritique(command: RecritiqueClaim) -> None:
        await state["critic"].handle_recritique(command)

    @controls.subscriber(
        subjects.CRITIC_DRAIN,
        queue=subjects.CRITIC_QUEUE,
        title="critic.drain",
        decoder=empty_is_object,
    )
    async def on_drain(request: ControlRequest) -> ControlReply:
        """Operator verb (admin route): release claims from critic_quarantine (all, or `args.claim_ids`)."""
        return await state["critic"].drain(request)

    broker.include_router(controls)

    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
