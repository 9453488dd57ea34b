"""Persistence of the librarian: one set-based statement assesses a whole batch of claims.

`assess` resolves every `supports[]` entry of up to `batch_size` active claims against
`research_sources`, checks `decay_at`, and brings the claims' open librarian findings along —
one round trip per batch, never a query per claim. `apply` records the new findings, resolves
the stale ones and writes the audit rows, in the caller's transaction.
"""

from __future__ import annotations

import uuid

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from research_agents import FindingsRepository
from research_librarian import reshape
from research_librarian.experiment import Triage
from research_librarian.prepare import ClaimHealth, claim_health
from research_platform import audit

SERVICE = "librarian"

ASSESS_BATCH = text(
    """
WITH batch AS (
    SELECT c.id, c.supports, c.decay_at
    FROM memory_claims c
    WHERE c.status = 'active' AND c.id > :after
    ORDER BY c.id
    LIMIT :batch_size
),
cited AS (
    SELECT b.id, s.value ->> 'source_id' AS source_id
    FROM batch b CROSS JOIN LATERAL jsonb_array_elements(
        CASE jsonb_typeof(b.supports) WHEN 'array' THEN b.supports ELSE '[]'::jsonb END
    ) AS s
),
missing AS (
    SELECT cited.id, array_agg(DISTINCT coalesce(cited.source_id, '')) AS missing
    FROM cited LEFT JOIN research_sources r ON r.source_id = cited.source_id
    WHERE r.source_id IS NULL
    GROUP BY cited.id
),
counted AS (
    SELECT cited.id, count(*) AS supports FROM cited GROUP BY cited.id
),
open AS (
    SELECT b.id, jsonb_agg(jsonb_build_object('id', f.id, 'kind', f.kind)) AS open
    FROM findings f JOIN batch b ON f.claim_ids @> ARRAY[b.id]
    WHERE f.claim_ids && (SELECT array_agg(id) FROM batch)
      AND f.agent = :agent AND f.resolved_at IS NULL AND f.expires_at > now()
    GROUP BY b.id
)
SELECT b.id,
       coalesce(counted.supports, 0) AS supports,
       missing.missing,
       b.decay_at,
       (b.decay_at IS NOT NULL AND b.decay_at <= now() + make_interval(days => :decay_days)) AS decaying,
       open.open
FROM batch b
LEFT JOIN counted USING (id)
LEFT JOIN missing USING (id)
LEFT JOIN open USING (id)
ORDER BY b.id
"""
)

FIRST_ID = uuid.UUID(int=0)


class Provenance:
    """The librarian's view of the ledger."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.findings = FindingsRepository(session, SERVICE)

    async def assess(self, after: uuid.UUID, batch_size: int, decay_days: int) -> list[ClaimHealth]:
        """The next `batch_size` active claims after `after` (by id), with their health."""
        rows = await self.session.execute(
            ASSESS_BATCH,
            {"after": after, "batch_size": batch_size, "decay_days": decay_days, "agent": SERVICE},
        )
        return [claim_health(row) for row in rows.mappings()]

    async def apply(self, changes: Triage, run_id: uuid.UUID | None = None) -> tuple[int, int]:
        """Record opened findings and resolve stale ones, each with its audit row; (opened, resolved)."""
        resolved_ids = set(await self.findings.mark_resolved_many([r.finding.finding_id for r in changes.resolved]))
        for resolution in changes.resolved:
            if resolution.finding.finding_id not in resolved_ids:
                continue  # resolved meanwhile by another run: nothing to audit twice
            audit.record(
                self.session,
                service=SERVICE,
                action="research.librarian.resolved",
                claim_id=resolution.claim_id,
                subject_ids={"finding_id": resolution.finding.finding_id, "run_id": run_id},
                payload=reshape.resolution_payload(resolution),
            )
        new = [reshape.finding(health, kind) for health, kind in changes.opened]
        ids = await self.findings.record_many(new)
        for finding_id, finding in zip(ids, new, strict=True):
            audit.record(
                self.session,
                service=SERVICE,
                action="research.librarian.finding",
                claim_id=finding.claim_ids[0],
                subject_ids={"finding_id": finding_id, "run_id": run_id},
                payload={"kind": finding.kind, **finding.payload},
            )
        return len(ids), len(resolved_ids)
