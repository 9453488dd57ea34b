"""The audit log as readers browse it (`uow.audit_log`), newest first. Writing audit rows is
`uow.audit` (checked against the catalogue); nothing here writes. The agents' findings are
`uow.findings` (`findings.py`), browsed with `uow.findings.browse`.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select

from research_ledger.base import LedgerBase
from research_ledger.tables import AuditEvent


class AuditLog(LedgerBase):
    """Reads of `audit_events`, in the unit of work's session."""

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
