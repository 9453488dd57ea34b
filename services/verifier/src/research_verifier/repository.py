"""What the verifier reads from and writes to the ledger — always through `research_ledger.Ledger`.

A verification is a report of kind `verification`; each run is one version (its verdict and
confidence in the version's `review`). `finish` is the one transaction that ends a run: the
version with its citation check, the `completed` status, the `research.verification.completed`
audit row (verdict, duration) and, for a watched claim, the verdict history row and — when the
verdict or confidence moved or a cited source is now retracted — a finding and
`research.verification.verdict_changed` with both verdicts and the finding id.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from research_agents import FindingsRepository, NewFinding
from research_ledger import AuditAction, UnitOfWork
from research_ledger.status import REFRESHABLE_REPORT_STATES
from research_ledger.tables import ReportRow, ResearchSource
from research_reports import CitationCheck, Report
from research_verification import Assessment
from research_verifier.experiment import Previous, VerdictChange
from research_verifier.prepare import VerificationJob

SERVICE = "verifier"
FINDINGS_AGENT = "replicator"  # findings of watched claims: the replicator keeps them under watch


class VerificationLedger:
    """The verifier's ledger access in the caller's session."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.ledger = UnitOfWork(session, service=SERVICE)

    async def open(self, job: VerificationJob, *, watch_days: float) -> ReportRow:
        """The verification's report row; created when the command came straight from the bus, and
        moved to `running` under this run when it is a scheduled re-verification of a finished one.

        A verification asked with `watch` enters the watched claims here, once: on its first run
        (a re-verification, origin `watch`, is already watched), due `watch_days` after now. The
        verifier is the one writer of `watched_claims` rows, whichever way the command came."""
        await self.ledger.reports.open(
            job.verification_id,
            kind="verification",
            run_id=job.run_id,
            subject=job.stored_claim(),
            subject_key=job.stored_claim()[:200].lower(),
            request=job.stored_request(),
        )
        row = await self.ledger.reports.get(job.verification_id)
        assert row is not None
        if job.watch and job.origin != "watch":
            await self.ledger.watched.watch(
                job.verification_id, job.stored_claim(), interval_days=watch_days
            )
        if (
            job.origin == "watch"
            and row.run_id != job.run_id
            and row.status in REFRESHABLE_REPORT_STATES
        ):
            await self.ledger.reports.refresh(job.verification_id, run_id=job.run_id)
            await self.session.refresh(row)
        return row

    async def previous(self, verification_id: uuid.UUID) -> Previous | None:
        """Verdict, confidence and cited sources of the latest stored version."""
        version = await self.ledger.reports.version(verification_id)
        if version is None:
            return None
        review = version.review or {}
        refs = Report.model_validate(version.content).references
        return Previous(
            review.get("verdict", ""),
            review.get("confidence", ""),
            frozenset(r.paper_id or "" for r in refs),
            str(review.get("judge", "")),
        )

    async def finish(
        self,
        job: VerificationJob,
        report: Report,
        assessment: Assessment,
        check: CitationCheck,
        *,
        duration_s: float,
        counts: dict[str, Any],
        judge: str = "",
    ) -> int:
        version = await self.ledger.reports.save_version(
            job.verification_id,
            run_id=job.run_id,
            content=report.model_dump(mode="json"),
            markdown=report.render_markdown(),
            citation_check=check.model_dump(mode="json") | {"ok": not check.blocking},
            review={
                "verdict": str(assessment.verdict),
                "confidence": str(assessment.confidence),
                "headline": assessment.headline,
                "supporting_sources": assessment.supporting_sources,
                "contradicting_sources": assessment.contradicting_sources,
                "qualifying_sources": assessment.qualifying_sources,
                "support_share": assessment.support_share,
                "coverage": assessment.coverage,
                "mean_strength": assessment.mean_strength,
                "judge": judge,
            },
            counts={
                "verdict": str(assessment.verdict),
                "confidence": str(assessment.confidence),
                **counts,
            },
        )
        await self.ledger.reports.complete(job.verification_id, outcome=str(assessment.verdict))
        await self.ledger.watched.record_verdict(
            job.verification_id,
            job.run_id,
            str(assessment.verdict),
            str(assessment.confidence),
            judge or None,
        )
        self.ledger.audit(
            AuditAction.VERIFICATION_COMPLETED,
            claim_id=job.verification_id,
            subject_ids={"report_id": job.verification_id},
            payload={
                "verdict": str(assessment.verdict),
                "confidence": str(assessment.confidence),
                "duration_s": round(duration_s, 3),
                "run_id": job.run_id,
                "statements": len(job.statements),
                "judge": judge,
            },
        )
        return version

    async def retracted_sources(self, source_ids: set[str]) -> set[str]:
        """Which of `source_ids` the ledger knows to be retracted (`research_sources.retracted`, set by
        the connectors' metadata, the replicator or the scout)."""
        ids = sorted(s for s in source_ids if s)
        if not ids:
            return set()
        rows = await self.session.scalars(
            select(ResearchSource.source_id).where(
                ResearchSource.source_id.in_(ids), ResearchSource.retracted.is_(True)
            )
        )
        return set(rows)

    async def verdict_changed(
        self, job: VerificationJob, new: NewFinding, moved: VerdictChange
    ) -> uuid.UUID:
        """Record a changed re-verification: the finding (insert-only, 180 days, in the replicator's
        name: the watched-claim schedule is its) and its audit row; returns the finding id."""
        finding_id = await FindingsRepository(self.session, FINDINGS_AGENT).record(
            new.kind, new.claim_ids, new.payload
        )
        self.ledger.audit(
            AuditAction.VERIFICATION_VERDICT_CHANGED,
            claim_id=job.verification_id,
            subject_ids={"report_id": job.verification_id, "finding_id": finding_id},
            payload={
                "previous": moved.previous_verdict,
                "verdict": moved.verdict,
                "previous_confidence": moved.previous_confidence,
                "confidence": moved.confidence,
                "run_id": job.run_id,
                "retracted_sources": moved.retracted_sources,
                "cause": moved.cause,
            },
        )
        return finding_id

    async def fail(self, verification_id: uuid.UUID, reason: str) -> bool:
        return await self.ledger.reports.fail(verification_id, reason)
