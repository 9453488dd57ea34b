"""What the verifier writes to the ledger, in the caller's unit of work (`research_ledger.Ledger`);
its reads are the ledger's named queries (`uow.reports`, `uow.sources.retracted`).

A verification is a report of kind `verification`; each run is one version (its verdict and
confidence in the version's `review`). `finish` is the one unit of work that ends a run: the
version with its citation check, the `completed` status, the `research.verification.completed`
audit row (verdict, duration) and, for a watched claim, the verdict history row and — when the
verdict or confidence moved or a cited source is now retracted — a finding and
`research.verification.verdict_changed` with both verdicts and the finding id.
"""

from __future__ import annotations

import uuid
from typing import Any

from research_ledger import AuditAction, UnitOfWork
from research_ledger.findings import NewFinding
from research_ledger.reports import ReportRow
from research_ledger.status import REFRESHABLE_REPORT_STATES
from research_reports import CitationCheck, Report
from research_verification import Assessment
from research_verifier.experiment import Previous, VerdictChange
from research_verifier.prepare import VerificationJob

SERVICE = "verifier"
FINDINGS_AGENT = "replicator"  # findings of watched claims: the replicator keeps them under watch


async def open_verification(
    uow: UnitOfWork, job: VerificationJob, *, watch_days: float
) -> ReportRow:
    """The verification's report row; created when the command came straight from the bus, and
    moved to `running` under this run when it is a scheduled re-verification of a finished one.

    A verification asked with `watch` enters the watched claims here, once: on its first run
    (a re-verification, origin `watch`, is already watched), due `watch_days` after now. The
    verifier is the one writer of `watched_claims` rows, whichever way the command came."""
    await uow.reports.open(
        job.verification_id,
        kind="verification",
        run_id=job.run_id,
        subject=job.stored_claim(),
        subject_key=job.stored_claim()[:200].lower(),
        request=job.stored_request(),
    )
    row = await uow.reports.get(job.verification_id)
    assert row is not None
    if job.watch and job.origin != "watch":
        await uow.watched.watch(job.verification_id, job.stored_claim(), interval_days=watch_days)
    if (
        job.origin == "watch"
        and row.run_id != job.run_id
        and row.status in REFRESHABLE_REPORT_STATES
    ):
        await uow.reports.refresh(job.verification_id, run_id=job.run_id)
        await uow.session.refresh(row)  # the row as `refresh` left it
    return row


async def previous_verdict(uow: UnitOfWork, verification_id: uuid.UUID) -> Previous | None:
    """Verdict, confidence and cited sources of the latest stored version."""
    version = await uow.reports.version(verification_id)
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
    uow: UnitOfWork,
    job: VerificationJob,
    report: Report,
    assessment: Assessment,
    check: CitationCheck,
    *,
    duration_s: float,
    counts: dict[str, Any],
    judge: str = "",
) -> int:
    version = await uow.reports.save_version(
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
    await uow.reports.complete(job.verification_id, outcome=str(assessment.verdict))
    await uow.watched.record_verdict(
        job.verification_id,
        job.run_id,
        str(assessment.verdict),
        str(assessment.confidence),
        judge or None,
    )
    uow.audit(
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


async def verdict_changed(
    uow: UnitOfWork, job: VerificationJob, new: NewFinding, moved: VerdictChange
) -> uuid.UUID:
    """Record a changed re-verification: the finding (insert-only, 180 days, in the replicator's
    name: the watched-claim schedule is its) and its audit row; returns the finding id."""
    finding_id = await uow.findings.kept_by(FINDINGS_AGENT).record(
        new.kind, new.claim_ids, new.payload
    )
    uow.audit(
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
