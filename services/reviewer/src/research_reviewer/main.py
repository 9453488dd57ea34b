"""Reviewer service: living literature reviews on the bus.

Subscribers:
- `research.review.requested` — durable pull consumer `reviewer-requests` (stream
  `RESEARCH_REVIEWS`): a `RequestReview` runs the author → peer-reviewer loop (`pipeline`),
  traced on `research.run.<run_id>.event`. Publishing a `RequestReview` JSON here is a supported
  interface (the gateway does the same).
- `research.claim.decided` — durable `reviewer-claim-decisions` (new events only): runs the
  stale sweep (`sweep`), which also runs on a tick for the periodic agents' findings.

Publishes `research.review.completed` (`ReviewCompleted`) when a run stored its version, the
pending claims of its key findings on `research.claim.pending`, and the run events.

Engines (`research_llm.choose_engine`): offline by default (extractive author, computed peer
review); with an LLM provider configured (`LLM__PROVIDER`, keys) the author's plan and report go
through the provider chain with JSON schemas (`llm_author`). The broker, delivery (ack / retry /
dead letter + audit), lifespan and declared publishers are `research_platform.app.service_app`'s;
the connector client is `research_modes.ConnectorClient`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from faststream import FastStream
from nats.js.api import DeliverPolicy

from research_contracts import ClaimDecided, ClaimProposed, subjects
from research_contracts.reviews import RequestReview, ReviewCompleted
from research_judgement import get_judge
from research_ledger import Ledger
from research_llm.offline.relevance import Relevance, default_encoder
from research_modes import ConnectorClient
from research_modes.app import mode_app
from research_platform.app import Consumes, ServiceContext
from research_platform.broker import Emits
from research_platform.service import run_service
from research_platform.shutdown import running
from research_reviewer import sweep
from research_reviewer.author import OfflineAuthor
from research_reviewer.bootstrap import bootstrap
from research_reviewer.experiment import Author
from research_reviewer.llm_author import LlmAuthor
from research_reviewer.peer_review import PeerReviewer
from research_reviewer.pipeline import ReviewService
from research_reviewer.repository import SERVICE
from research_reviewer.settings import ReviewerServiceSettings

EMITS = (
    Emits(
        subjects.CLAIM_PENDING,
        subjects.CLAIMS_STREAM,
        ClaimProposed,
        "reviewer.claim_proposed",
        "A pending claim per key finding of a saved review version, for the critic (`Nats-Msg-Id` "
        "`ClaimProposed.msg_id()`: a re-announcement is a no-op).",
    ),
    Emits(
        subjects.REVIEW_COMPLETED,
        subjects.REVIEWS_STREAM,
        ReviewCompleted,
        "reviewer.review_completed",
        "A review run stored its version: the review, the run, the version, the peer review's verdict "
        "and the number of claims (`Nats-Msg-Id` `review-completed-<run_id>`). A failed run publishes "
        "none (its run events end with `done(failed)`).",
    ),
)


def create_app(settings: ReviewerServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    config = settings.reviewer

    @asynccontextmanager
    async def build(
        ctx: ServiceContext[ReviewerServiceSettings, ReviewService],
    ) -> AsyncIterator[ReviewService]:
        broker, ledger = ctx.broker, Ledger(ctx.sessions)
        embedder = deps.embedder
        relevance = Relevance(default_encoder())

        def offline() -> OfflineAuthor:
            return OfflineAuthor(relevance, config)

        make_author: Callable[[], Author] = deps.llm.choose(
            remote=lambda chain: lambda: LlmAuthor(chain, offline(), config),
            offline=lambda: offline,
        )
        service = ReviewService(
            broker=broker,
            ledger=ledger,
            settings=config,
            port=ConnectorClient(lambda: broker.connection, timeout_s=config.tool_timeout_s),
            make_author=make_author,
            reviewer=PeerReviewer(config.spot_checks, cut=config.cut),
            embed=embedder.embed_one,
            completed=ctx.publishers[subjects.REVIEW_COMPLETED],
            run_events=ctx.run_events,
        )
        await asyncio.to_thread(embedder.embed_one, "warm up")
        await asyncio.to_thread(
            get_judge().load
        )  # relevance and pair models, before the first request
        sweeping = sweep.sweep_forever(
            ledger,
            lambda: broker.connection.jetstream(),  # noqa: PLW0108 - the broker connects after this is built; `connection` raises until then
            config.sweep_interval_s,
            publisher=ctx.run_events,
        )
        async with running(sweeping, what="stale sweep"):
            yield service

    app, ctx = mode_app(
        settings,
        SERVICE,
        build,
        emits=EMITS,
        requests=Consumes(
            subjects.REVIEW_REQUESTED,
            subjects.REVIEWS_STREAM,
            subjects.REVIEWER_REQUESTS_DURABLE,
            title="reviewer.requests",
            description=(
                f"Literature review requests: publish a RequestReview JSON on `{subjects.REVIEW_REQUESTED}` (JetStream "
                f"stream {subjects.REVIEWS_STREAM}; set a `Nats-Msg-Id`). Bad input is dead-lettered."
            ),
            batch_size=config.concurrency,
        ),
        command=RequestReview,
    )

    @ctx.consume(
        Consumes(
            subjects.CLAIM_DECIDED,
            subjects.CLAIMS_STREAM,
            subjects.REVIEWER_DECISIONS_DURABLE,
            title="reviewer.claim_decisions",
            description="A claim changed status: reports resting on a claim that left `active` become stale.",
            batch_size=16,
            deliver_policy=DeliverPolicy.NEW,
        )
    )
    async def on_claim_decided(event: ClaimDecided) -> None:
        """Sweep for reports resting on claims that are no longer trustworthy (not after a plain promotion)."""
        if sweep.may_undermine(event):
            await sweep.sweep(
                Ledger(ctx.sessions), ctx.broker.connection.jetstream(), publisher=ctx.run_events
            )

    return app


def run() -> None:
    run_service(SERVICE, create_app, ReviewerServiceSettings)


if __name__ == "__main__":
    run()
