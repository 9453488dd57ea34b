"""What the reviewer writes to the ledger in the caller's unit of work (`research_ledger.Ledger`);
its reads are the ledger's named queries (`uow.reports.version`, `uow.claims.statuses`,
`uow.claims.pending_among`).

`finish` is the one unit of work that ends a review run: the key findings' pending claims (and
the sources they cite), the report version with its citation check, peer review and diff, one
`research.review.verdict` audit row per round, the report's `completed` status and the
new claims' `research.claim.pending` in the outbox. Either all of it commits or none of it does.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from research_contracts import ClaimProposed, subjects
from research_ledger import AuditAction, UnitOfWork
from research_ledger.reports import ReportRow
from research_reports import Report
from research_reviewer.experiment import LoopOutcome
from research_reviewer.prepare import ReviewJob
from research_reviewer.reshape import Proposal

SERVICE = "reviewer"
GOOD_STANDING = ("pending", "active")


@dataclass(frozen=True)
class Finished:
    version: int
    claim_ids: dict[str, uuid.UUID]  # finding key → claim
    proposed: list[Proposal]  # newly stored (announced through the outbox)


async def open_review(uow: UnitOfWork, job: ReviewJob) -> ReportRow:
    """The review's report row, created (`running`) when the command came straight from the bus."""
    await uow.reports.open(
        job.review_id,
        kind="review",
        run_id=job.run_id,
        subject=job.topic,
        subject_key=job.topic_key,
        request=job.stored_request(),
    )
    row = await uow.reports.get(job.review_id)
    assert row is not None
    return row


async def finish_review(
    uow: UnitOfWork,
    job: ReviewJob,
    outcome: LoopOutcome,
    proposals: list[Proposal],
    embeddings: Sequence[list[float] | None],
    report: Report,
    diff: dict[str, Any] | None,
) -> Finished:
    """The run's new claims (each announced through the outbox), its verdict audit rows, its
    report version and the report's `completed` status."""
    proposed = []
    for proposal, embedding in zip(proposals, embeddings, strict=True):
        if await uow.claims.propose(proposal.claim, embedding, proposal.hits):
            proposed.append(proposal)
            claim = proposal.claim
            announce(uow, claim.claim_id, claim.entity, claim.statement)
    claim_ids = {p.claim.provenance["finding_id"]: p.claim.claim_id for p in proposals}
    for round_ in outcome.rounds:
        uow.audit(
            AuditAction.REVIEW_VERDICT,
            subject_ids={"report_id": job.review_id},
            payload={
                "iteration": round_.iteration,
                "verdict": round_.review.verdict,
                **round_.review.counts(),
                "missed_papers": len(round_.review.missed_papers),
                "run_id": job.run_id,
            },
        )
    version = await uow.reports.save_version(
        job.review_id,
        run_id=job.run_id,
        content=report.model_dump(mode="json"),
        markdown=report.render_markdown(),
        citation_check=outcome.check.model_dump(mode="json") | {"ok": not outcome.check.blocking},
        review={
            **outcome.review.model_dump(mode="json"),
            "text": outcome.review.render(),
            "rounds": [r.info() for r in outcome.rounds],
        },
        claim_ids=list(claim_ids.values()),
        diff=diff,
        counts={
            "tags": report.tag_counts(),
            "iterations": len(outcome.rounds),
            "verdict": outcome.verdict,
            **outcome.dropped(),
        },
    )
    await uow.reports.complete(job.review_id, outcome=outcome.verdict)
    return Finished(version=version, claim_ids=claim_ids, proposed=proposed)


def announce(uow: UnitOfWork, claim_id: uuid.UUID, entity: str, statement: str) -> None:
    """Stage a review claim's `research.claim.pending` for the critic in the unit of work's
    outbox (published after the commit; `ClaimProposed.msg_id()` makes a repeat a no-op)."""
    proposal = ClaimProposed(claim_id=claim_id, task_id=None, entity=entity, statement=statement)
    uow.outbox.add(subjects.CLAIM_PENDING, proposal, msg_id=proposal.msg_id())
