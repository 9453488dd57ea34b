"""Critic service: judges pending claims and moves them to active, rejected or supersede.

consume `research.claim.pending` → prepare → load claim + active claims of the entity →
experiment (provider chain, under the SLA) → reshape (conform verdict) → apply + audit (one
transaction) → publish `research.claim.decided`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import structlog
from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, NatsBroker, NatsMessage, PullSub
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import ClaimDecided, ClaimStatus, subjects
from research_critic import experiment, prepare, reshape
from research_critic.repository import SERVICE, EntityChanged, Verdicts, for_review
from research_llm import build_chain
from research_platform.broker import consume_guarded, ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory, transaction
from research_platform.errors import PrepareError, TransientError
from research_platform.logging import get_logger
from research_platform.service import run_service
from research_platform.settings import Settings

log = get_logger(__name__)
JUDGE_ATTEMPTS = 5


@dataclass
class Critic:
    broker: NatsBroker
    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    chain: object

    async def handle_pending(self, msg: NatsMessage) -> None:
        proposed = prepare.prepare_pending(msg.body)
        with structlog.contextvars.bound_contextvars(claim_id=str(proposed.claim_id)):
            for _ in range(JUDGE_ATTEMPTS):
                try:
                    await self.judge_and_decide(proposed.claim_id)
                    return
                except EntityChanged:  # another claim of the entity was decided meanwhile: judge again
                    log.info("entity changed while judging; judging again")
            raise TransientError(f"entity kept changing over {JUDGE_ATTEMPTS} judgements")

    async def judge_and_decide(self, claim_id: uuid.UUID) -> None:
        async with self.sessions() as session:
            verdicts = Verdicts(session)
            claim = await verdicts.claim(claim_id)
            if claim is None:
                raise PrepareError(f"unknown claim {claim_id}")
            if claim.status != ClaimStatus.pending:
                log.info("claim already decided, skipping redelivery", status=claim.status)
                return
            active = await verdicts.active_of_entity(claim.entity, besides=claim.id)
            candidate, reviews = for_review(claim), [for_review(c) for c in active]
        try:
            outcome = await experiment.judge(candidate, reviews, self.chain, self.settings.critic.sla_seconds)
        except TimeoutError as exc:
            raise TransientError(f"critique exceeded the {self.settings.critic.sla_seconds}s SLA") from exc
        considered = {c.claim_id for c in reviews}
        verdict = reshape.conform(outcome, considered)
        async with transaction(self.sessions) as session:
            decided = await Verdicts(session).decide(claim.id, verdict, considered)
        if decided is not None:
            await self.announce(decided)
            log.info("claim decided", verdict=verdict.verdict.value, score=verdict.score)

    async def announce(self, decided: ClaimDecided) -> None:
        await self.broker.publish(
            decided,
            subjects.CLAIM_DECIDED,
            stream=subjects.CLAIMS_STREAM,
            headers={subjects.MSG_ID_HEADER: f"claim-decided-{decided.claim_id}-{decided.status.value}"},
        )


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    state: dict[str, Critic] = {}

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        state["critic"] = Critic(broker, session_factory(engine), settings, build_chain(settings.llm))
        yield
        await engine.dispose()

    @broker.subscriber(
        subjects.CLAIM_PENDING,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        durable=subjects.CRITIC_PENDING_DURABLE,
        config=ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver),
        pull_sub=PullSub(batch_size=1, timeout=2.0),
        max_workers=settings.critic.concurrency,
        ack_policy=AckPolicy.MANUAL,
        title="critic.pending",
        description="Pending claims to judge (ClaimProposed JSON).",
    )
    async def on_pending(msg: NatsMessage) -> None:
        critic = state["critic"]
        await consume_guarded(
            msg,
            lambda: critic.handle_pending(msg),
            broker=broker,
            sessions=critic.sessions,
            service=SERVICE,
            max_deliver=settings.max_deliver,
            heartbeat_s=settings.ack_wait_s / 3,
        )

    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
