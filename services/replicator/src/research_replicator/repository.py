"""What the replicator records of a re-run, in the caller's unit of work (with its audit row);
the reads are the ledger's (`uow.claims.due_for_recheck`, `uow.sources.retracted`).

The service prepares the rows it reads (`prepare.due_claim`) and reshapes the finding it writes
(`reshape.finding`).
"""

from __future__ import annotations

import uuid

from research_ledger import AuditAction, UnitOfWork
from research_ledger.findings import NewFinding
from research_replicator.experiment import Comparison
from research_replicator.prepare import DueClaim

SERVICE = "replicator"


async def conclude(
    uow: UnitOfWork,
    claim: DueClaim,
    comparison: Comparison,
    new: NewFinding | None,
    run_id: uuid.UUID | None,
) -> uuid.UUID | None:
    """Record the outcome of one re-run (`new` is its reshaped finding, if it is one); the
    finding id when the claim needs a re-critique."""
    subject = {"run_id": run_id, "entity": claim.entity}
    if new is None:  # confirmed, or skipped: an audit row only
        skipped = comparison.verdict is None
        uow.audit(
            AuditAction.REPLICATOR_SKIPPED if skipped else AuditAction.REPLICATOR_CONFIRMED,
            claim_id=claim.claim_id,
            subject_ids=subject,
            payload={"reason": comparison.reason, **comparison.details}
            if skipped
            else comparison.details,
        )
        return None
    finding_id = await uow.findings.record(new.kind, new.claim_ids, new.payload)
    if comparison.details.get("retracted"):
        # The ledger learns the retraction too, so the librarian and the next re-run see it.
        await uow.claims.retract_sources(list(comparison.details["retracted"]))
    uow.audit(
        AuditAction.REPLICATOR_FINDING,
        claim_id=claim.claim_id,
        subject_ids={**subject, "finding_id": finding_id},
        payload={"verdict": comparison.verdict, **comparison.details},
    )
    return finding_id
