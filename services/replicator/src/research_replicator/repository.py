"""Persistence of the replicator: which claims are due, and what a re-run concluded (with audits).

The repository only reads and writes: the service prepares the rows it reads (`prepare.due_claim`)
and reshapes the finding it writes (`reshape.finding`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import text, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_agents import FindingsRepository, NewFinding
from research_ledger import AuditAction, UnitOfWork
from research_ledger.tables import ResearchSource
from research_replicator.experiment import Comparison
from research_replicator.prepare import DueClaim

SERVICE = "replicator"

DUE_CLAIMS = text(
    """
SELECT c.id, c.question, c.entity, c.statement, c.supports
FROM memory_claims c
WHERE c.status = 'active'
  AND c.created_at < now() - make_interval(secs => :min_age_s)
  AND NOT EXISTS (
      SELECT 1 FROM audit_events a
      WHERE a.claim_id = c.id AND a.service = 'replicator'
        AND a.occurred_at > now() - make_interval(secs => :recheck_s))
  AND NOT EXISTS (
      SELECT 1 FROM findings f
      WHERE f.claim_ids @> ARRAY[c.id] AND f.agent = 'replicator'
        AND f.resolved_at IS NULL AND f.expires_at > now())
ORDER BY c.created_at
LIMIT :limit
"""
)


class Replications:
    """The replicator's view of the ledger."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ledger = UnitOfWork(session, service=SERVICE)
        self.findings = FindingsRepository(session, SERVICE)

    async def due(
        self, *, min_age_days: float, recheck_days: float, limit: int
    ) -> list[Mapping[str, Any]]:
        """Rows of the active claims older than `min_age_days`, not re-checked for `recheck_days`,
        without an open finding."""
        rows = await self.session.execute(
            DUE_CLAIMS,
            {"min_age_s": min_age_days * 86400, "recheck_s": recheck_days * 86400, "limit": limit},
        )
        # RowMapping's keys are column names (it also takes Column objects)
        return cast(list[Mapping[str, Any]], list(rows.mappings()))

    async def retracted_sources(self, source_ids: list[str]) -> set[str]:
        if not source_ids:
            return set()
        rows = await self.session.execute(
            text(
                "SELECT source_id FROM research_sources WHERE retracted AND source_id = ANY(:ids)"
            ),
            {"ids": source_ids},
        )
        return set(rows.scalars())

    async def conclude(
        self,
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
            self.ledger.audit(
                AuditAction.REPLICATOR_SKIPPED if skipped else AuditAction.REPLICATOR_CONFIRMED,
                claim_id=claim.claim_id,
                subject_ids=subject,
                payload={"reason": comparison.reason, **comparison.details}
                if skipped
                else comparison.details,
            )
            return None
        finding_id = await self.findings.record(new.kind, new.claim_ids, new.payload)
        if comparison.details.get("retracted"):
            # The ledger learns the retraction too, so the librarian and the next re-run see it.
            await self.session.execute(
                update(ResearchSource)
                .where(ResearchSource.source_id.in_(comparison.details["retracted"]))
                .values(retracted=True)
            )
        self.ledger.audit(
            AuditAction.REPLICATOR_FINDING,
            claim_id=claim.claim_id,
            subject_ids={**subject, "finding_id": finding_id},
            payload={"verdict": comparison.verdict, **comparison.details},
        )
        return finding_id
