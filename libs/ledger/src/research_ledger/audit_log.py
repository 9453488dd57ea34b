"""The audit log and the agents' findings as readers browse them (`uow.audit_log`), newest first.
Writing audit rows is `uow.audit` (checked against the catalogue); nothing here writes.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import func, select

from research_ledger.base import LedgerBase
from research_ledger.tables import AuditEvent, Finding


class AuditLog(LedgerBase):
    """Reads of `audit_events` and `findings`, in the unit of work's session."""

    async def events(
        self,
        *,
        action: str | None = None,
        task_id: uuid.UUID | None = None,
        claim_id: uuid.UUID | None = None,
        key_id: uuid.UUID | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 200,
    ) -> list[AuditEvent]:
        """Audit rows newest first, narrowed by action, task, claim, the key that acted or was
        acted on (`subject_ids.key_id`) and time (`since` ≤ occurred_at < `until`)."""
        query = select(AuditEvent)
        if action:
            query = query.where(AuditEvent.action == action)
        if key_id:
            query = query.where(AuditEvent.subject_ids["key_id"].astext == str(key_id))
        if since:
            query = query.where(AuditEvent.occurred_at >= since)
        if until:
            query = query.where(AuditEvent.occurred_at < until)
        if task_id:
            query = query.where(AuditEvent.task_id == task_id)
        if claim_id:
            query = query.where(AuditEvent.claim_id == claim_id)
        return list(await self.session.scalars(query.order_by(AuditEvent.id.desc()).limit(limit)))

    async def findings(
        self,
        *,
        agent: str | None = None,
        kind: str | None = None,
        unresolved: bool = False,
        limit: int = 100,
    ) -> list[Finding]:
        """Unexpired findings newest first, narrowed by agent, kind and (`unresolved`) those
        nobody resolved yet."""
        query = select(Finding).where(Finding.expires_at > func.now())
        if agent:
            query = query.where(Finding.agent == agent)
        if kind:
            query = query.where(Finding.kind == kind)
        if unresolved:
            query = query.where(Finding.resolved_at.is_(None))
        return list(
            await self.session.scalars(query.order_by(Finding.created_at.desc()).limit(limit))
        )
