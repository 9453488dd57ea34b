"""What the reviewer reads from and writes to the ledger — always through `research_ledger.Ledger`.

`finish` is the one transaction that ends a review run: the key findings' pending claims (and
the sources they cite), the report version with its citation check, peer review and diff, one
`research.review.verdict` audit row per round, and the report's `completed` status. Either all
of it commits or none of it does.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger import AuditAction, UnitOfWork
from research_ledger.tables import MemoryClaim, ReportRow, ReportVersionRow
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
    proposed: list[Proposal]  # newly stored (to announce)


class ReviewLedger:
    """The reviewer's ledger access in the caller's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ledger = UnitOfWork(session, service=SERVICE)

    async def open(self, job: ReviewJob) -> ReportRow:
        """The review's report row, created (`running`) when the command came straight from the bus."""
        await self.ledger.reports.open(
            job.review_id,
            kind="review",
            run_id=job.run_id,
            subject=job.topic,
            subject_key=job.topic_key,
            request=job.stored_request(),
        )
        row = await self.ledger.reports.get(job.review_id)
        assert row is not None
        return row

    async def latest(self, review_id: uuid.UUID) -> ReportVersionRow | None:
        return await self.ledger.reports.version(review_id)

    async def standing(self, claim_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
        """Status of each claim (absent ids are unknown to the ledger)."""
        if not claim_ids:
            return {}
        rows = await self.session.execute(
            select(MemoryClaim.id, MemoryClaim.status).where(MemoryClaim.id.in_(claim_ids))
        )
        return {row.id: row.status for row in rows}

    async def finish(
        self,
        job: ReviewJob,
        outcome: LoopOutcome,
        proposals: list[Proposal],
        embeddings: Sequence[list[float] | None],
        report: Report,
        diff: dict[str, Any] | None,
    ) -> Finished:
        proposed = []
        for proposal, embedding in zip(proposals, embeddings, strict=True):
            if await self.ledger.claims.propose(proposal.claim, embedding, proposal.hits):
                proposed.append(proposal)
        claim_ids = {p.claim.provenance["finding_id"]: p.claim.claim_id for p in proposals}
        for round_ in outcome.rounds:
            self.ledger.audit(
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
        version = await self.ledger.reports.save_version(
            job.review_id,
            run_id=job.run_id,
            content=report.model_dump(mode="json"),
            markdown=report.render_markdown(),
            citation_check=outcome.check.model_dump(mode="json")
            | {"ok": not outcome.check.blocking},
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
        await self.ledger.reports.complete(job.review_id, outcome=outcome.verdict)
        return Finished(version=version, claim_ids=claim_ids, proposed=proposed)

    async def pending(self, claim_ids: list[uuid.UUID]) -> list[MemoryClaim]:
        if not claim_ids:
            return []
        rows = await self.session.scalars(
            select(MemoryClaim).where(
                MemoryClaim.id.in_(claim_ids), MemoryClaim.status == "pending"
            )
        )
        return list(rows)
