"""Researcher service: consumes research tasks by tier and proposes pending claims.

consume `research.task.<tier>` → prepare → evidence (connector, request/reply) → experiment
(provider chain) → reshape (verify quotes) → persist claim + audit (one transaction) →
publish `research.claim.pending` with a `Nats-Msg-Id`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import structlog
from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, NatsBroker, NatsMessage, PullSub
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import ClaimProposed, RunResearch, SearchEvidence, SourceHit, subjects
from research_corpus.embedding import get_embedder
from research_llm import build_chain
from research_platform.broker import consume_guarded, ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory, transaction
from research_platform.errors import TransientError
from research_platform.logging import get_logger
from research_platform.service import run_service
from research_platform.settings import Settings
from research_researcher import experiment, prepare, reshape
from research_researcher.repository import SERVICE, ClaimLedger

log = get_logger(__name__)


@dataclass
class Researcher:
    """Everything one task needs, built in the lifespan."""

    broker: NatsBroker
    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    chain: object

    async def handle(self, msg: NatsMessage) -> None:
        task = prepare.prepare_task(msg.body)
        with structlog.contextvars.bound_contextvars(task_id=str(task.task_id), subject=msg.raw_message.subject):
            async with transaction(self.sessions) as session:
                ledger = ClaimLedger(session)
                existing = await ledger.claim_for_task(task.task_id)
                if existing is None:
                    await ledger.start(task)
            if existing is not None:  # redelivery after the claim was stored: re-announce, never re-create
                await self.announce(existing.id, task.task_id, existing.entity, existing.statement)
                return
            hits = await self.gather_evidence(task)
            evidence = experiment.evidence_docs(hits)
            outcome = await experiment.draft_claim(task, evidence, self.chain)
            claim = reshape.to_claim(task, outcome, evidence)
            embedding = await asyncio.to_thread(get_embedder().embed_one, claim.statement)
            async with transaction(self.sessions) as session:
                await ClaimLedger(session).propose(claim, embedding, hits)
            await self.announce(claim.claim_id, task.task_id, claim.entity, claim.statement)
            log.info("claim proposed", claim_id=str(claim.claim_id), supports=len(claim.supports))

    async def gather_evidence(self, task: RunResearch) -> list[SourceHit]:
        sources = task.filters.sources or self.settings.researcher.evidence_sources
        request = SearchEvidence(
            query=task.question,
            sources=sources,
            limit=self.settings.researcher.evidence_limit,
            filters=task.filters,
        )
        try:
            reply = await self.broker.request(
                request, subjects.CONNECTOR_SEARCH, timeout=self.settings.researcher.connector_timeout_s
            )
        except TimeoutError as exc:
            raise TransientError("the connector service did not answer in time") from exc
        found = prepare.prepare_evidence(reply.body)
        if found.error:
            raise TransientError(f"the connector refused the search: {found.error}")
        return found.hits

    async def announce(self, claim_id, task_id, entity: str, statement: str) -> None:  # type: ignore[no-untyped-def]
        await self.broker.publish(
            ClaimProposed(claim_id=claim_id, task_id=task_id, entity=entity, statement=statement),
            subjects.CLAIM_PENDING,
            stream=subjects.CLAIMS_STREAM,
            headers={subjects.MSG_ID_HEADER: f"claim-proposed-{claim_id}"},
        )


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    state: dict[str, Researcher] = {}
    stream = JStream(subjects.TASKS_STREAM, declare=False)
    consumer = ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver)

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        state["researcher"] = Researcher(broker, session_factory(engine), settings, build_chain(settings.llm))
        await asyncio.to_thread(get_embedder().embed_one, "warm up")
        yield
        await engine.dispose()

    async def on_task(msg: NatsMessage) -> None:
        researcher = state["researcher"]
        await consume_guarded(
            msg,
            lambda: researcher.handle(msg),
            broker=broker,
            sessions=researcher.sessions,
            service=SERVICE,
            max_deliver=settings.max_deliver,
            heartbeat_s=settings.ack_wait_s / 3,
        )

    for tier, durable in subjects.RESEARCHER_DURABLES.items():
        broker.subscriber(
            subjects.task_subject(tier),
            stream=stream,
            durable=durable,
            config=consumer,
            pull_sub=PullSub(batch_size=1, timeout=2.0),
            max_workers=settings.researcher.concurrency,
            ack_policy=AckPolicy.MANUAL,
            title=f"researcher.{tier}",
            description=f"Research tasks of the {tier} tier (RunResearch JSON).",
        )(on_task)

    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
