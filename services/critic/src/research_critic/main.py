"""Critic service: judges pending claims and moves them to active, rejected or supersede.

consume `research.claim.pending` (a `ClaimProposed`, validated by FastStream; acknowledgement,
retry and dead-letter are `research_platform.delivery.Delivery`) → load the claim and the active
claims of its entity → prepare (a `Review`; an unknown claim is dead-lettered) → experiment
(provider chain, under the SLA) → reshape (the supersede rule) → apply + audit through the
ledger (one transaction) → publish `research.claim.decided`.

A critique past the SLA counts as a timeout; after `critic.quarantine_after` in a row the claim
moves to `critic_quarantine` and waits for an operator's drain (`research.control.critic.drain`,
request/reply). `research.claim.recritique` (from the replicator) judges an active claim again
without the sources that no longer back it; a reject withdraws it.
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

from pydantic import ValidationError

from research_contracts import (
    ClaimDecided,
    ClaimProposed,
    ClaimStatus,
    ControlReply,
    ControlRequest,
    CriticVerdict,
    RecritiqueClaim,
    subjects,
)
from research_critic import experiment, prepare, reshape
from research_critic.repository import SERVICE, ClaimReads, EntityChanged
from research_ledger import Ledger, dead_letters
from research_llm import ProviderChain, build_chain
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory, transaction, without_transactions
from research_platform.delivery import Delivery
from research_platform.errors import TransientError
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
    chain: ProviderChain
    reads: async_sessionmaker[AsyncSession] | None = None  # the claim and its peers, read before judging; None = `sessions`

    async def handle_pending(self, proposed: ClaimProposed) -> None:
        """Judge the pending claim `proposed` names; judged again when its entity changed meanwhile."""
        with structlog.contextvars.bound_contextvars(claim_id=str(proposed.claim_id)):
            for _ in range(JUDGE_ATTEMPTS):
                try:
                    await self.judge_and_decide(proposed.claim_id)
                    return
                except EntityChanged:  # another claim of the entity was decided meanwhile: judge again
                    log.info("entity changed while judging; judging again")
            raise TransientError(f"entity kept changing over {JUDGE_ATTEMPTS} judgements")

    async def judge_and_decide(self, claim_id: uuid.UUID) -> None:
        async with (self.reads or self.sessions)() as session:  # `decide` re-checks what judging assumed
            reads = ClaimReads(session)
            claim = prepare.known(claim_id, await reads.claim(claim_id))
            if claim.status != ClaimStatus.pending:
                log.info("claim already decided, skipping redelivery", status=claim.status)
                return
            active = await Ledger(session, service=SERVICE).verdicts.active_of_entity(claim.entity, besides=claim.id)
            review = prepare.review(claim, active, await reads.quote_vectors(prepare.quotes(claim)))
        verdict = await self.judge(claim.id, review, ClaimStatus.pending)
        if verdict is None:
            return
        async with transaction(self.sessions) as session:
            decided = await Ledger(session, service=SERVICE).verdicts.decide(claim.id, verdict, review.considered)
        if decided is not None:
            await self.announce(decided)
            log.info("claim decided", verdict=verdict.verdict.value, score=verdict.score)

    async def judge(self, claim_id: uuid.UUID, review: prepare.Review, judged_status: ClaimStatus) -> CriticVerdict | None:
        """experiment → reshape: the verdict the ledger can apply, or None when the claim was quarantined
        (a timeout short of quarantine raises `TransientError`, so the message is redelivered)."""
        try:
            outcome = await experiment.judge(review, self.chain, self.settings.critic.sla_seconds)
        except TimeoutError as exc:
            await self.timed_out(claim_id, judged_status, exc)
            return None
        return reshape.conform(outcome, review.considered)

    async def timed_out(self, claim_id: uuid.UUID, judged_status: ClaimStatus, exc: TimeoutError) -> None:
        """Count the SLA timeout; quarantine (and return) on the last straw, else retry later."""
        sla = self.settings.critic.sla_seconds
        async with transaction(self.sessions) as session:
            quarantined = await Ledger(session, service=SERVICE).verdicts.record_timeout(
                claim_id, judged_status=judged_status, quarantine_after=self.settings.critic.quarantine_after, sla_s=sla
            )
        if quarantined is None:
            raise TransientError(f"critique exceeded the {sla}s SLA") from exc
        log.warning("claim quarantined after repeated SLA timeouts", sla_s=sla)
        await self.announce(quarantined)

    async def handle_recritique(self, command: RecritiqueClaim) -> None:
        """Judge an active claim again, without the sources the replicator found retracted or lost."""
        with structlog.contextvars.bound_contextvars(claim_id=str(command.claim_id)):
            async with (self.reads or self.sessions)() as session:  # `reconsider` re-checks in its transaction
                reads, verdicts = ClaimReads(session), Ledger(session, service=SERVICE).verdicts
                claim = prepare.known(command.claim_id, await reads.claim(command.claim_id))
                if claim.status != ClaimStatus.active or await verdicts.recritique_applied(command):
                    log.info("re-critique not applicable, skipping", status=claim.status)
                    return
                discredited = await reads.discredited_sources(command, prepare.cited_sources(claim))
                active = await verdicts.active_of_entity(claim.entity, besides=claim.id)
                review = prepare.review(claim, active, await reads.quote_vectors(prepare.quotes(claim)))
            verdict = await self.judge(claim.id, prepare.without(review, discredited), ClaimStatus.active)
            if verdict is None:
                return
            async with transaction(self.sessions) as session:
                decided = await Ledger(session, service=SERVICE).verdicts.reconsider(command, verdict, discredited)
            log.info("claim re-critiqued", verdict=verdict.verdict.value, withdrawn=decided is not None)
            if decided is not None:
                await self.announce(decided)

    async def drain(self, body: bytes) -> ControlReply:
        """The operator's drain: quarantined claims (all, or `args.claim_ids`) go back to judgement."""
        try:
            request = ControlRequest.model_validate_json(body) if body.strip() else ControlRequest()
            wanted = request.args.get("claim_ids")
            claim_ids = [uuid.UUID(str(c)) for c in wanted] if wanted is not None else None
        except (ValidationError, ValueError, TypeError) as exc:
            return ControlReply(status=400, detail={"error": f"invalid drain request: {exc}"})
        drain_id = uuid.uuid4()
        async with transaction(self.sessions) as session:
            released = await Ledger(session, service=SERVICE).verdicts.release(claim_ids, request.actor_key_id)
            for claim in released:
                # Published before the commit: a refused publish leaves the claims quarantined.
                await self.broker.publish(
                    ClaimProposed(claim_id=claim.id, task_id=claim.task_id, entity=claim.entity, statement=claim.statement),
                    subjects.CLAIM_PENDING,
                    stream=subjects.CLAIMS_STREAM,
                    headers={subjects.MSG_ID_HEADER: f"claim-drained-{drain_id}-{claim.id}"},
                )
        log.info("quarantine drained", count=len(released), key_id=request.actor_key_id)
        return ControlReply(status=200, detail={"drained": [str(c.id) for c in released], "count": len(released)})

    async def announce(self, decided: ClaimDecided) -> None:
        await self.broker.publish(
            decided,
            subjects.CLAIM_DECIDED,
            stream=subjects.CLAIMS_STREAM,
            headers={subjects.MSG_ID_HEADER: f"claim-decided-{decided.claim_id}-{decided.status.value}"},
        )


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    delivery = Delivery.install(broker, service=SERVICE, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s)
    state: dict[str, Critic] = {}

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url(), pool_size=settings.critic.concurrency + 2, pre_ping=False)
        sessions = session_factory(engine)
        delivery.record = dead_letters.recorder(sessions, SERVICE)
        # The reads before a judgement need no transaction: `decide` checks the claim is still
        # pending and its entity unchanged (`EntityChanged`) in the transaction that writes.
        state["critic"] = Critic(broker, sessions, settings, build_chain(settings.llm), reads=session_factory(without_transactions(engine)))
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

    @broker.subscriber(subjects.CRITIC_DRAIN, queue=subjects.CRITIC_QUEUE, title="critic.drain")
    async def on_drain(msg: NatsMessage) -> ControlReply:
        """Operator verb (admin route): release claims from critic_quarantine."""
        return await state["critic"].drain(msg.body)

    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
