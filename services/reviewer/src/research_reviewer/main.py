"""Reviewer service: living literature reviews on the bus.

Subscribers:
- `research.review.requested` — durable pull consumer `reviewer-requests` (stream
  `RESEARCH_REVIEWS`): a `RequestReview` runs the author → peer-reviewer loop (`pipeline`),
  traced on `research.run.<run_id>.event`. Publishing a `RequestReview` JSON here is a supported
  interface (the gateway does the same).
- `research.claim.decided` — durable `reviewer-claim-decisions` (new events only): runs the
  stale sweep (`sweep`), which also runs on a tick for the periodic agents' findings.

Engines: offline by default (extractive author, computed peer review); with an LLM provider
configured (`LLM__PROVIDER`, keys) the author's plan and report go through the provider chain
with JSON schemas (`llm_author`). The broker, delivery (ack / retry / dead letter + audit),
lifespan and request subscriber are `research_modes.app.mode_app`'s; the connector client is
`research_modes.ConnectorClient`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from faststream import AckPolicy, FastStream
from faststream.nats import ConsumerConfig, JStream, PullSub
from nats.js.api import DeliverPolicy

from research_contracts import ClaimDecided, ClaimProposed, subjects
from research_contracts.reviews import RequestReview
from research_corpus.embedding import get_embedder
from research_judgement import get_judge
from research_llm import build_chain
from research_llm.offline.relevance import Relevance, default_encoder
from research_modes import ConnectorClient, remote_configured
from research_modes.app import ModeContext, Requests, mode_app
from research_platform.broker import Emits
from research_platform.service import run_service
from research_platform.shutdown import cancel_within
from research_reviewer import sweep
from research_reviewer.author import OfflineAuthor
from research_reviewer.llm_author import LlmAuthor
from research_reviewer.peer_review import PeerReviewer
from research_reviewer.pipeline import ReviewService
from research_reviewer.repository import SERVICE
from research_reviewer.settings import ReviewerServiceSettings


def create_app(settings: ReviewerServiceSettings) -> FastStream:
    config = settings.reviewer

    @asynccontextmanager
    async def build(ctx: ModeContext) -> AsyncIterator[ReviewService]:
        assert ctx.sessions is not None
        broker, sessions = ctx.broker, ctx.sessions
        embedder = get_embedder()
        relevance = Relevance(default_encoder())
        chain = build_chain(settings.llm)
        offline = lambda: OfflineAuthor(relevance, config)
        make_author = (
            (lambda: LlmAuthor(chain, offline(), config)) if remote_configured(chain) else offline
        )
        service = ReviewService(
            broker=broker,
            sessions=sessions,
            settings=config,
            port=ConnectorClient(lambda: broker.connection, timeout_s=config.tool_timeout_s),
            make_author=make_author,
            reviewer=PeerReviewer(config.spot_checks, cut=config.cut),
            embed=embedder.embed_one,
            claims=ctx.publishers[subjects.CLAIM_PENDING],
        )
        await asyncio.to_thread(embedder.embed_one, "warm up")
        await asyncio.to_thread(
            get_judge().load
        )  # relevance and pair models, before the first request
        ticker = asyncio.create_task(
            sweep.sweep_forever(
                sessions, lambda: broker.connection.jetstream(), config.sweep_interval_s
            )
        )
        try:
            yield service
        finally:
            await cancel_within(ticker, what="stale sweep", timeout_s=10)

    app, ctx = mode_app(
        settings,
        SERVICE,
        Requests(
            subject=subjects.REVIEW_REQUESTED,
            stream=subjects.REVIEWS_STREAM,
            durable=subjects.REVIEWER_REQUESTS_DURABLE,
            command=RequestReview,
            handler="on_review",
            title="reviewer.requests",
            batch_size=config.concurrency,
            description=(
                f"Literature review requests: publish a RequestReview JSON on `{subjects.REVIEW_REQUESTED}` (JetStream "
                f"stream {subjects.REVIEWS_STREAM}; set a `Nats-Msg-Id`). Bad input is dead-lettered."
            ),
            summary="Write, review and store one literature review (≤ 2 author/reviewer rounds).",
        ),
        build,
        emits=(
            Emits(
                subjects.CLAIM_PENDING,
                subjects.CLAIMS_STREAM,
                ClaimProposed,
                "reviewer.claim_proposed",
                "A pending claim per key finding of a saved review version, for the critic (`Nats-Msg-Id` "
                "`ClaimProposed.msg_id()`: a re-announcement is a no-op).",
            ),
        ),
    )

    @ctx.broker.subscriber(
        subjects.CLAIM_DECIDED,
        stream=JStream(subjects.CLAIMS_STREAM, declare=False),
        durable=subjects.REVIEWER_DECISIONS_DURABLE,
        config=ConsumerConfig(
            ack_wait=settings.ack_wait_s,
            max_deliver=settings.max_deliver,
            deliver_policy=DeliverPolicy.NEW,
        ),
        pull_sub=PullSub(batch_size=16, timeout=2.0),
        ack_policy=AckPolicy.MANUAL,
        title="reviewer.claim_decisions",
        description="A claim changed status: reports resting on a claim that left `active` become stale.",
    )
    async def on_claim_decided(event: ClaimDecided) -> None:
        """Sweep for reports resting on claims that are no longer trustworthy (not after a plain promotion)."""
        if sweep.may_undermine(event):
            assert ctx.sessions is not None
            await sweep.sweep(ctx.sessions, ctx.broker.connection.jetstream())

    return app


def run() -> None:
    run_service(SERVICE, create_app, ReviewerServiceSettings)


if __name__ == "__main__":
    run()
