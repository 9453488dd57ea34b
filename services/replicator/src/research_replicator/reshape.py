"""Shape the replicator's comparison as a finding, a re-critique command and audit payloads."""

from __future__ import annotations

import uuid

from research_contracts import RecritiqueClaim
from research_ledger.findings import NewFinding
from research_replicator.experiment import FINDING_VERDICTS, Comparison
from research_replicator.prepare import DueClaim


def finding(claim: DueClaim, comparison: Comparison) -> NewFinding | None:
    """The finding an eroded or retracted claim gets; None for a confirmed or skipped re-run."""
    if comparison.verdict not in FINDING_VERDICTS:
        return None
    return NewFinding(
        kind=comparison.verdict,
        claim_ids=[claim.claim_id],
        payload={"entity": claim.entity, "question": claim.question, **comparison.details},
    )


def recritique(claim: DueClaim, comparison: Comparison, finding_id: uuid.UUID) -> RecritiqueClaim:
    return RecritiqueClaim(
        claim_id=claim.claim_id, reason=str(comparison.verdict), finding_id=finding_id
    )
