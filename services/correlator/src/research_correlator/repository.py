"""Persistence of the correlator: cluster rows in, reshaped findings (with audit rows) out.

The repository only reads and writes: the service prepares what it reads (`prepare.cluster`)
and reshapes what it writes (`reshape.finding`, `reshape.no_pattern_payload`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from research_agents import FindingsRepository, FindingView, NewFinding
from research_ledger import AuditAction, UnitOfWork
from research_ledger.tables import MemoryClaim, ResearchSource

SERVICE = "correlator"


class Patterns:
    """The correlator's view of the ledger."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.ledger = UnitOfWork(session, service=SERVICE)
        self.findings = FindingsRepository(session, SERVICE)

    async def entities(self, *, after: str, limit: int, min_claims: int) -> list[str]:
        """Entities with at least `min_claims` active claims, in name order after `after`."""
        query = (
            select(MemoryClaim.entity)
            .where(MemoryClaim.status == "active", MemoryClaim.entity > after)
            .group_by(MemoryClaim.entity)
            .having(func.count() >= min_claims)
            .order_by(MemoryClaim.entity)
        )
        if limit:
            query = query.limit(limit)
        return list(await self.session.scalars(query))

    async def known_entities(self, limit: int = 5000) -> list[str]:
        rows = await self.session.scalars(
            select(MemoryClaim.entity).where(MemoryClaim.status == "active").distinct().limit(limit)
        )
        return list(rows)

    async def cluster_rows(
        self, entity: str, max_claims: int
    ) -> tuple[list[Mapping[str, Any]], dict[str, int]]:
        """The newest `max_claims` active claims of `entity`, oldest first, and the publication
        year of every source they cite."""
        rows = (
            (
                await self.session.execute(
                    select(
                        MemoryClaim.id,
                        MemoryClaim.statement,
                        MemoryClaim.confidence,
                        MemoryClaim.supports,
                        MemoryClaim.created_at,
                    )
                    .where(MemoryClaim.entity == entity, MemoryClaim.status == "active")
                    .order_by(MemoryClaim.created_at.desc())
                    .limit(max_claims)
                )
            )
            .mappings()
            .all()
        )
        cited = {
            str(s.get("source_id"))
            for row in rows
            for s in (row["supports"] or [])
            if isinstance(s, dict)
        }
        years: dict[str, Any] = {}
        if cited:
            found = await self.session.execute(
                select(ResearchSource.source_id, ResearchSource.year).where(
                    ResearchSource.source_id.in_(cited)
                )
            )
            years = {source_id: year for source_id, year in found.all()}
        # RowMapping's keys are column names (it also takes Column objects)
        return cast(list[Mapping[str, Any]], list(reversed(rows))), years

    async def open_of_entity(
        self, entity: str, claim_ids: tuple[uuid.UUID, ...]
    ) -> list[FindingView]:
        return [
            f
            for f in await self.findings.open_for_claims(claim_ids)
            if f.payload.get("entity") == entity
        ]

    async def record(
        self, entity: str, new: NewFinding, audit_payload: dict[str, Any], run_id: uuid.UUID | None
    ) -> uuid.UUID:
        finding_id = await self.findings.record(new.kind, new.claim_ids, new.payload)
        self.ledger.audit(
            AuditAction.CORRELATOR_FINDING,
            subject_ids={
                "finding_id": finding_id,
                "entity": entity,
                "run_id": run_id,
                "claim_ids": list(new.claim_ids),
            },
            payload=audit_payload,
        )
        return finding_id

    def no_pattern(self, entity: str, payload: dict[str, Any], run_id: uuid.UUID | None) -> None:
        self.ledger.audit(
            AuditAction.CORRELATOR_NO_PATTERN,
            subject_ids={"entity": entity, "run_id": run_id},
            payload=payload,
        )

    async def resolve(
        self, stale: list[FindingView], entity: str, now: str | None, run_id: uuid.UUID | None
    ) -> int:
        resolved = set(await self.findings.mark_resolved_many([f.finding_id for f in stale]))
        for f in stale:
            if f.finding_id in resolved:
                self.ledger.audit(
                    AuditAction.CORRELATOR_RESOLVED,
                    subject_ids={"finding_id": f.finding_id, "entity": entity, "run_id": run_id},
                    payload={"kind": f.kind, "now": now or "no_pattern"},
                )
        return len(resolved)
