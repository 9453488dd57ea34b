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

from faststream import FastStream

from research_contracts import ClaimProposed, RunResearch, Tier, subjects
from research_corpus.embedding import get_embedder
from research_corpus.embedding.batching import MicroBatchingEmbedder
from research_judgement import get_judge
from research_ledger import Ledger, dead_letters
from research_ledger.outbox import relay_beside
from research_platform.app import Consumes, Pool, ServiceContext, service_app
from research_platform.broker import Emits
from research_platform.db import session_factory, without_transactions
from research_platform.service import run_service
from research_researcher import rerun
from research_researcher.bootstrap import bootstrap
from research_researcher.pipeline import Researcher
from research_researcher.repository import SERVICE
from research_researcher.settings import ResearcherServiceSettings
from research_researcher.tiers import TierGate

CLAIM_PROPOSED = Emits(
    subjects.CLAIM_PENDING,
    subjects.CLAIMS_STREAM,
    ClaimProposed,
    "researcher.claim_proposed",
    "The task's pending claim, for the critic (`Nats-Msg-Id` `ClaimProposed.msg_id()`: "
    "a redelivered task re-announces without a second critique).",
)


def create_app(settings: ResearcherServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    concurrency = settings.researcher.concurrency

    @asynccontextmanager
    async def build(
        ctx: ServiceContext[ResearcherServiceSettings, Researcher],
    ) -> AsyncIterator[Researcher]:
        # the process's embedder as the app starts: the offline engine asks for the same one
        # (`get_embedder`), so the vectors handed to its cache (`remember`) are found there, even
        # where another app configured the embedder after this one was created (tests)
        embedder = get_embedder()
        assert isinstance(
            embedder, MicroBatchingEmbedder
        )  # one worker batches every task's question
        # Recall and the sentence-vector lookup read advisory data: no transaction around them.
        reads = session_factory(without_transactions(ctx.reader))
        researcher = Researcher(
            broker=ctx.broker,
            ledger=Ledger(ctx.sessions, read_sessions=reads),
            corpus=ctx.sessions,
            corpus_reads=reads,
            settings=settings.researcher,
            chain=deps.llm.chain(),
            gate=TierGate(
                lambda: ctx.broker.connection.jetstream(),  # noqa: PLW0108 - the broker connects after this is built; `connection` raises until then
                poll_s=settings.researcher.tier_poll_s,
            ),
            embed=embedder.aembed_one,
            remember=embedder.remember,
            embed_many=embedder.aembed,
        )
        await embedder.aembed_one("warm up")
        await asyncio.to_thread(
            get_judge().load
        )  # relevance and pair models, before the first request
        yield researcher

    app, ctx = service_app(
        settings,
        SERVICE,
        build,
        emits=(CLAIM_PROPOSED,),
        dead_letters=dead_letters.recorder,
        pool=Pool(size=concurrency + 2, pre_ping=False, reader=True),  # the reader: reads only
    )
    ctx.run_beside(relay_beside)  # publishes the proposed claims after their commits

    def task_handler(tier: Tier) -> Callable[[RunResearch], Awaitable[None]]:
        async def on_task(task: RunResearch) -> None:
            """Research one task of this tier and propose its claim (pending) for the critic."""
            await ctx.service.handle(task, tier)

        return on_task

    # `concurrency` tasks per tier are worked on at once and a new one starts as soon as one ends:
    # waiting for a whole fetched batch to finish left the machine idle behind each batch's
    # slowest task. Tasks are fetched one at a time and only when a worker is free (FastStream
    # takes the worker slot before handing the message on), so at most one fetched task waits,
    # for at most one task's time, without a heartbeat: far inside `ack_wait`.
    for tier, durable in subjects.RESEARCHER_DURABLES.items():
        ctx.consume(
            Consumes(
                subjects.task_subject(tier),
                subjects.TASKS_STREAM,
                durable,
                title=f"researcher.{tier}",
                description=(
                    f"Research tasks of the {tier} tier: publish a RunResearch JSON on `{subjects.task_subject(tier)}` "
                    f"(JetStream stream {subjects.TASKS_STREAM}; set a `Nats-Msg-Id` header to de-duplicate). "
                    "Emergency work is drained first; bad input is dead-lettered to `research.deadletter.<subject>`."
                ),
                max_workers=concurrency,
            )
        )(task_handler(Tier(tier)))

    ctx.broker.include_router(rerun.router(ctx.broker, settings))
    return app


def run() -> None:
    run_service(SERVICE, create_app, ResearcherServiceSettings)


if __name__ == "__main__":
    run()
