"""One review run, start to finish.

prepare (normalise the command) → open the report (idempotent; created here when the command
came straight from the bus) → the author/peer-reviewer loop, traced on `research.run.<run_id>.event`
→ reshape (claims of the key findings, diff against the previous version on a refresh) →
persist (claims + version + verdict audits + `completed` + the new claims' `research.claim.pending`
in the outbox, one unit of work; the relay announces the claims to the critic after the commit)
→ `result`, `done` → `research.review.completed` (`ReviewCompleted`). Every event is declared
(the run events included), so the reviewer's AsyncAPI lists it.

Idempotent under redelivery: a run that already saved its version only re-announces its still
pending claims (through the outbox) and its completion (message ids make that a no-op in JetStream); a command for a run that is no longer the
report's current one (superseded by a refresh) is ignored. A failure that retrying cannot fix
fails the report with the reason (the trace ends with `error` and `done(failed)`); a corpus tool
that did not answer is transient and the command is redelivered (`research_modes.mode_run`). Outside
sources fail soft: the ones that were down are told in the trace, named in the report's metadata
(`sources_down`) and audited (`research.report.sources_down`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from faststream.nats import NatsBroker

from research_contracts import subjects
from research_contracts.reviews import RequestReview, ReviewCompleted
from research_ledger import Ledger
from research_modes import ModeRun, mode_run, runs_now
from research_platform.logging import get_logger
from research_reports import Report, diff_reports
from research_reviewer import prepare, reshape
from research_reviewer.experiment import Author, LoopOutcome, Reviewer, review_loop
from research_reviewer.repository import (
    GOOD_STANDING,
    SERVICE,
    Finished,
    announce,
    finish_review,
    open_review,
)
from research_reviewer.settings import ReviewerSettings
from research_reviewer.tools import ToolPort

log = get_logger(__name__)
Embed = Callable[[str], list[float]]


@dataclass
class ReviewService:
    """Everything a review run needs, built in the lifespan."""

    broker: NatsBroker
    ledger: Ledger
    settings: ReviewerSettings
    port: ToolPort
    make_author: Callable[[], Author]
    reviewer: Reviewer
    embed: Embed
    completed: Any = None  # the declared publisher of `research.review.completed` (None: not told)
    run_events: Any = None  # the declared run-event publisher (None: the JetStream context)

    async def handle(self, command: RequestReview) -> None:
        job = prepare.review_job(command)
        with structlog.contextvars.bound_contextvars(
            review_id=str(job.review_id), run_id=job.run_id
        ):
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                row = await open_review(uow, job)
                done = await uow.reports.version_of_run(job.review_id, job.run_id)
                if done is not None:  # a redelivery after a crash: its still-pending claims again
                    for claim in await uow.claims.pending_among(list(done.claim_ids)):
                        announce(uow, claim.id, claim.entity, claim.statement)
            if done is not None:
                log.info(
                    "run already saved its version; re-announcing its claims", version=done.version
                )
                await self.tell_completed(
                    ReviewCompleted(
                        review_id=job.review_id,
                        run_id=job.run_id,
                        version=done.version,
                        verdict=str(done.review.get("verdict", "")),
                        iterations=max(1, len(done.review.get("rounds", []))),
                        claims=len(done.claim_ids),
                        refresh=job.refresh,
                    )
                )
                return
            if not runs_now(row, job.run_id):
                return
            # The claims' entity is the key stored with the report (whoever opened it first).
            await self.run(dataclasses.replace(job, topic_key=row.subject_key))

    async def run(self, job: prepare.ReviewJob) -> None:
        async with mode_run(
            self.broker.connection.jetstream(),
            self.ledger,
            service=SERVICE,
            kind="review",
            report_id=job.review_id,
            run_id=job.run_id,
            publisher=self.run_events,
        ) as run:
            outcome = await review_loop(
                job, self.make_author(), self.reviewer, run.port(self.port), run.recorder
            )
            run.sources.check()
            outcome.report.metadata.update(run.sources.metadata())
            report, finished = await self.persist(job, outcome, run)
            await run.recorder.result(
                report=report.model_dump(mode="json"),
                review=outcome.review.model_dump(mode="json"),
                iteration_info=[r.info() for r in outcome.rounds],
                iterations=len(outcome.rounds),
            )
        if run.failed:
            return
        await self.tell_completed(
            ReviewCompleted(
                review_id=job.review_id,
                run_id=job.run_id,
                version=finished.version,
                verdict=outcome.verdict,
                iterations=len(outcome.rounds),
                claims=len(finished.claim_ids),
                refresh=job.refresh,
            )
        )
        log.info(
            "review completed",
            verdict=outcome.verdict,
            version=finished.version,
            claims=len(finished.claim_ids),
        )

    async def persist(
        self, job: prepare.ReviewJob, outcome: LoopOutcome, run: ModeRun | None = None
    ) -> tuple[Report, Finished]:
        """Claims, diff and version of the run's final report (a refresh re-uses claims in good standing)."""
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            previous = await uow.reports.version(job.review_id)
            reuse = None
            if previous is not None:
                earlier = _claims_of(previous.content)
                standing = await uow.claims.statuses(list(earlier.values()))
                reuse = {
                    key: standing.get(claim_id, "") in GOOD_STANDING
                    for key, claim_id in earlier.items()
                }
        proposals = reshape.claim_proposals(
            outcome.report,
            job,
            outcome.report.metadata.get("model", "offline"),
            claim_days=self.settings.claim_days,
            reuse=reuse,
        )
        embeddings = await asyncio.to_thread(
            lambda: [self.embed(p.claim.statement) for p in proposals]
        )
        report = reshape.attach_claims(
            outcome.report, {p.claim.provenance["finding_id"]: p.claim.claim_id for p in proposals}
        )
        diff = None
        if previous is not None:
            old = Report.model_validate(previous.content)
            report.version = previous.version + 1
            diff = diff_reports(old, report).model_dump(mode="json")
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            finished = await finish_review(uow, job, outcome, proposals, embeddings, report, diff)
            if run is not None:
                run.audit_sources(uow)
        return report, finished

    async def tell_completed(self, event: ReviewCompleted) -> None:
        """`research.review.completed`, once per run (its message id)."""
        if self.completed is not None:
            await self.completed.publish(event, headers={subjects.MSG_ID_HEADER: event.msg_id()})


def _claims_of(content: dict[str, Any]) -> dict[str, uuid.UUID]:
    """Finding key → claim id of a stored version's key findings."""
    section = Report.model_validate(content).section("Key Findings")
    return {
        f.key(): uuid.UUID(f.claim_id) for f in (section.findings if section else []) if f.claim_id
    }
