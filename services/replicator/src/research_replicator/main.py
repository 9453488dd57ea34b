"""Replicator service (periodic): re-runs aged claims and sends the ones that no longer hold back to the critic.

Each run: active claims older than `min_age_days` and not re-checked recently (repository) →
prepare (rows → `DueClaim`) → re-run the researcher on the same question (request/reply
`research.researcher.rerun`) → experiment (the stance model judges the fresh evidence against the claim, the old
supports' quotes are looked for: eroded | retracted_source | confirmed) → reshape (the finding) → repository: finding + audit `research.replicator.finding` and a `RecritiqueClaim` on
`research.claim.recritique` (the ledger's outbox, published after the commit), or audit `research.replicator.confirmed` /
`research.replicator.skipped` (with the reason). Then due watched claims are sent to the verifier
for re-verification (`watched`; also on the dispatcher's tick, at most `watched_in_flight`
unfinished at once). Operator verbs arrive on `research.control.replicator.<verb>`.

Subscriber `research.source.retracted` — durable pull consumer `replicator-retractions` (stream
`RESEARCH_CLAIMS`): a `SourcesRetracted` marks everything resting on the retracted works at once
(`retractions`). A re-run that finds a cited source newly retracted publishes one, so every other
claim, report and watched claim citing it hears of it too, not only the claim re-run. The
re-critiques a retraction asks for are held in the ledger and released on their own tick, at most
`recritique_in_flight` unjudged at once (`recritiques`).

Publishes `research.claim.recritique` (`RecritiqueClaim`), `research.verify.requested`
(`RequestVerification`) and `research.source.retracted` (`SourcesRetracted`), all declared
(`EMITS`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import structlog
from faststream import FastStream
from faststream.nats import NatsBroker

from research_agents import RunContext
from research_agents.app import schedule
from research_contracts import (
    EvidenceRefreshed,
    RecritiqueClaim,
    RerunResearch,
    SourcesRetracted,
    subjects,
)
from research_ledger import Ledger, dead_letters
from research_ledger.outbox import relay_beside
from research_platform.app import Consumes, Part, ServiceContext, service_app
from research_platform.broker import Emits
from research_platform.logging import get_logger
from research_platform.service import run_service
from research_platform.shutdown import running
from research_replicator import experiment, prepare, recritiques, reshape, retractions, watched
from research_replicator.bootstrap import bootstrap
from research_replicator.prepare import DueClaim
from research_replicator.repository import SERVICE, conclude
from research_replicator.settings import ReplicatorServiceSettings, ReplicatorSettings

log = get_logger(__name__)

RECRITIQUE = Emits(
    subjects.CLAIM_RECRITIQUE,
    subjects.CLAIMS_STREAM,
    RecritiqueClaim,
    "replicator.claim_recritique",
    "An active claim that no longer holds on fresh evidence (eroded, or a supporting source retracted), for the "
    "critic to judge again (`Nats-Msg-Id` `recritique-<finding_id>`); a retraction's are released from the "
    "ledger at most `recritique_in_flight` unjudged at once.",
)
RETRACTION = Emits(
    subjects.SOURCE_RETRACTED,
    subjects.CLAIMS_STREAM,
    SourcesRetracted,
    "replicator.source_retracted",
    "Cited sources a re-run found newly retracted, for this service's retraction handler to mark "
    "every claim, report and watched claim citing them (`Nats-Msg-Id` `sources-retracted-<event_id>`).",
)
EMITS = (RECRITIQUE, watched.REVERIFY, RETRACTION)


@dataclass
class Replicator:
    broker: NatsBroker  # asks the researcher (request/reply `research.researcher.rerun`)
    ledger: Ledger
    settings: ReplicatorSettings

    async def run(self, ctx: RunContext) -> dict[str, Any]:
        async with self.ledger.reading(service=SERVICE) as uow:
            rows = await uow.claims.due_for_recheck(
                min_age_days=self.settings.min_age_days,
                recheck_days=self.settings.recheck_days,
                limit=self.settings.claims_per_run,
            )
        for claim in map(prepare.due_claim, rows):
            await ctx.checkpoint()
            with structlog.contextvars.bound_contextvars(claim_id=str(claim.claim_id)):
                outcome = await self.replicate(claim, ctx)
            ctx.bump(outcome)
            ctx.bump("claims")
        ctx.counts["watched_reverifications"] = await watched.request_due(
            self.ledger,
            limit=self.settings.watched_per_run,
            in_flight=self.settings.watched_in_flight,
            spread=self.settings.watched_spread,
        )
        return ctx.counts

    async def replicate(self, claim: DueClaim, ctx: RunContext | None = None) -> str:
        """Re-run one claim; returns its verdict or `skipped`."""
        fresh = await self.ask_researcher(claim)
        async with self.ledger.reading(service=SERVICE) as uow:
            known = await uow.sources.retracted([s.source_id for s in claim.supports])
        comparison = await asyncio.to_thread(
            experiment.compare,
            claim,
            fresh,
            known,
            self.settings.erosion_threshold,
            self.settings.judged_sources,
        )
        new = reshape.finding(claim, comparison)
        newly = sorted(set(comparison.details.get("retracted") or []) - known)
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            finding_id = await conclude(uow, claim, comparison, new, ctx.run_id if ctx else None)
            if finding_id is not None:
                # With the finding, through the outbox: published after the commit, at least once.
                outbox = uow.outbox
                outbox.add(
                    subjects.CLAIM_RECRITIQUE,
                    reshape.recritique(claim, comparison, finding_id),
                    msg_id=f"recritique-{finding_id}",
                )
                if newly:  # the rest of the ledger citing them hears of it at once (`retractions`)
                    event = SourcesRetracted(source_ids=newly, origin="replicator")
                    outbox.add(subjects.SOURCE_RETRACTED, event, msg_id=event.msg_id())
        if comparison.verdict is None:
            log.info("replication skipped", reason=comparison.reason)
            return "skipped"
        log.info("claim replicated", verdict=comparison.verdict)
        return comparison.verdict

    async def ask_researcher(self, claim: DueClaim) -> EvidenceRefreshed:
        request = RerunResearch(
            claim_id=claim.claim_id,
            question=claim.question,
            entity=claim.entity or None,
            sources=self.settings.sources,
            limit=self.settings.limit,
        )
        try:
            reply = await self.broker.request(
                request, subjects.RESEARCHER_RERUN, timeout=self.settings.rerun_timeout_s
            )
        except TimeoutError:
            return EvidenceRefreshed(
                claim_id=claim.claim_id, error="the researcher did not answer in time"
            )
        except Exception as exc:  # noqa: BLE001 - no responders, connection trouble: skip this claim
            # and keep the run going
            return EvidenceRefreshed(
                claim_id=claim.claim_id, error=f"rerun request failed: {type(exc).__name__}"
            )
        return prepare.refreshed(reply.body)


def _looping(
    what: str,
    loop: Callable[[Ledger, ReplicatorSettings], Coroutine[Any, Any, None]],
    settings: ReplicatorSettings,
) -> Part:
    """`loop(ledger, settings)` run as a task beside the service for its lifetime, cancelled
    (within 10 s) when the service stops."""

    def beside(
        ctx: ServiceContext[ReplicatorServiceSettings, Any],
    ) -> AbstractAsyncContextManager[None]:
        return running(loop(Ledger(ctx.sessions), settings), what=what)

    return beside


def create_app(settings: ReplicatorServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    replicator = deps.settings.replicator
    app, ctx = service_app(
        settings, SERVICE, emits=EMITS, run_events=True, dead_letters=dead_letters.recorder
    )
    # publishes a finding's re-critique, the released held ones, the watched claims' re-verifications
    # and retractions after their commits
    ctx.run_beside(relay_beside)
    schedule(
        ctx,
        replicator.schedule,
        lambda ctx: Replicator(ctx.broker, Ledger(ctx.sessions), replicator).run,
    )

    if replicator.schedule.enabled:  # no ticks: no watched claims asked for on their own either
        ctx.run_beside(_looping("watched dispatcher", watched.dispatch_forever, replicator))
    # Always on: held re-critiques follow from retraction events, which this service consumes with
    # or without ticks.
    ctx.run_beside(_looping("re-critique release", recritiques.release_forever, replicator))

    @ctx.consume(
        Consumes(
            subjects.SOURCE_RETRACTED,
            subjects.CLAIMS_STREAM,
            subjects.REPLICATOR_RETRACTIONS_DURABLE,
            title="replicator.retractions",
            description="Cited works retracted: every claim, report and watched claim citing them "
            "is marked at once (a finding per claim, reports stale with the reason, watched claims "
            "due).",
        )
    )
    async def on_sources_retracted(event: SourcesRetracted) -> None:
        await retractions.handle(
            Ledger(ctx.sessions),
            ctx.broker.connection.jetstream(),
            event,
            in_flight=replicator.recritique_in_flight,
            run_events=ctx.run_events,
        )

    return app


def run() -> None:
    run_service(SERVICE, create_app, ReplicatorServiceSettings)


if __name__ == "__main__":
    run()
