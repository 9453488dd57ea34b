"""Researcher service: consumes research tasks by tier and proposes pending claims.

Subscribers:
- `research.task.emergency|priority|batched` — one durable pull consumer per tier (stream
  `RESEARCH_TASKS`); a lower tier waits while a higher tier has work (`tiers.TierGate`).
  Publishing a `RunResearch` JSON here is a supported interface (the gateway does the same).
- `research.researcher.rerun` — request/reply, queue group `researcher`: the replicator's
  re-run (`rerun.router`).

Handlers receive the command FastStream validated (`RunResearch`); acknowledging, retrying and
dead-lettering is `research_platform.delivery.Delivery`, installed on the broker.

The task flow itself lives in `pipeline.Researcher`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, PullSub

from research_contracts import ClaimProposed, RunResearch, Tier, subjects
from research_corpus.batching import MicroBatchingEmbedder
from research_corpus.embedding import get_embedder
from research_judgement import get_judge
from research_ledger import dead_letters
from research_llm import build_chain
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import (
    create_engine,
    create_read_engine,
    dispose,
    session_factory,
    without_transactions,
)
from research_platform.delivery import Delivery
from research_platform.logging import get_logger
from research_platform.service import run_service
from research_platform.settings import Settings
from research_researcher import rerun
from research_researcher.pipeline import Researcher
from research_researcher.repository import SERVICE
from research_researcher.tiers import TierGate

log = get_logger(__name__)


def create_app(settings: Settings) -> FastStream:
    broker = make_broker(settings.require_nats_url(), SERVICE)
    delivery = Delivery.install(
        broker, service=SERVICE, max_deliver=settings.max_deliver, ack_wait_s=settings.ack_wait_s
    )
    state: dict[str, Any] = {}
    stream = JStream(subjects.TASKS_STREAM, declare=False)
    consumer = ConsumerConfig(ack_wait=settings.ack_wait_s, max_deliver=settings.max_deliver)
    gate = TierGate(lambda: broker.connection.jetstream(), poll_s=settings.researcher.tier_poll_s)
    claims = broker.publisher(
        subjects.CLAIM_PENDING,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        schema=ClaimProposed,
        title="researcher.claim_proposed",
        description="The task's pending claim, for the critic (`Nats-Msg-Id` `ClaimProposed.msg_id()`: "
        "a redelivered task re-announces without a second critique).",
    )

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(
            settings.require_database_url(),
            pool_size=settings.researcher.concurrency + 2,
            pre_ping=False,
        )
        reader = create_read_engine(
            settings.database_read_url, engine, pool_size=settings.researcher.concurrency + 2
        )  # reads only
        embedder = get_embedder()
        assert isinstance(
            embedder, MicroBatchingEmbedder
        )  # one worker batches every task's question
        sessions = session_factory(engine)
        delivery.record = dead_letters.recorder(sessions, SERVICE)
        state["researcher"] = Researcher(
            broker=broker,
            sessions=sessions,
            settings=settings.researcher,
            chain=build_chain(settings.llm),
            gate=gate,
            embed=embedder.aembed_one,
            claims=claims,
            remember=embedder.remember,
            # Recall and the sentence-vector lookup read advisory data: no transaction around them.
            read_sessions=session_factory(without_transactions(reader)),
        )
        await embedder.aembed_one("warm up")
        await asyncio.to_thread(
            get_judge().load
        )  # relevance and pair models, before the first request
        yield
        await dispose(engine, reader)

    def task_handler(tier: Tier) -> Callable[[RunResearch], Awaitable[None]]:
        async def on_task(task: RunResearch) -> None:
            """Research one task of this tier and propose its claim (pending) for the critic."""
            await state["researcher"].handle(task, tier)

        return on_task

    # `concurrency` tasks per tier are worked on at once and a new one starts as soon as one ends:
    # waiting for a whole fetched batch to finish left the machine idle behind each batch's
    # slowest task. Tasks are fetched one at a time and only when a worker is free (FastStream
    # takes the worker slot before handing the message on), so at most one fetched task waits,
    # for at most one task's time, without a heartbeat: far inside `ack_wait`.
    for tier, durable in subjects.RESEARCHER_DURABLES.items():
        broker.subscriber(
            subjects.task_subject(tier),
            stream=stream,
            durable=durable,
            config=consumer,
            pull_sub=PullSub(batch_size=1, timeout=2.0),
            max_workers=settings.researcher.concurrency,
            ack_policy=AckPolicy.MANUAL,  # `Delivery` settles every message
            title=f"researcher.{tier}",
            description=(
                f"Research tasks of the {tier} tier: publish a RunResearch JSON on `{subjects.task_subject(tier)}` "
                f"(JetStream stream {subjects.TASKS_STREAM}; set a `Nats-Msg-Id` header to de-duplicate). "
                "Emergency work is drained first; bad input is dead-lettered to `research.deadletter.<subject>`."
            ),
        )(task_handler(Tier(tier)))

    broker.include_router(rerun.router(broker, settings))
    return FastStream(broker, lifespan=lifespan)


def run() -> None:
    run_service(SERVICE, create_app)


if __name__ == "__main__":
    run()
