"""What every part of the `Ledger` shares: the caller's session, the writing service, the audit writer."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger import audit
from research_ledger.audit import Entry
from research_ledger.catalogue import AuditAction
from research_ledger.tables import AuditEvent


class LedgerBase:
    """Holds the caller's session: the ledger never opens, commits or rolls back a transaction."""

    def __init__(self, session: AsyncSession, *, service: str) -> None:
        self.session = session
        self.service = service

    def audit(
        self,
        action: AuditAction,
        *,
        task_id: uuid.UUID | None = None,
        claim_id: uuid.UUID | None = None,
        subject_ids: dict[str, Any] | None = None,
        payload: dict[str, Any] | None = None,
    ) -> AuditEvent:
        """Stage an audit row of `action` (a catalogue member) in the caller's transaction."""
        return audit.record(
            self.session,
            action,
            service=self.service,
            task_id=task_id,
            claim_id=claim_id,
            subject_ids=subject_ids,
            payload=payload,
        )

    async def audit_many(self, entries: Iterable[Entry]) -> int:
        """Stage one audit row per entry in one INSERT (`audit.record_many`); how many."""
        return await audit.record_many(self.session, entries, service=self.service)
