"""What the connector tells operators when a source fails soft or a query is refused.

Each incident is one WARNING log line and one audit row, written in its own short transaction
(there is no other state change to share it with):

- `connector.degraded` — payload `{source, reason, operation, detail}`: the source returned
  nothing this time (429, 5xx, timeout, transport error, malformed payload, deadline…);
- `connector.phi_refused` — payload `{source, kinds}`: a query carried personal identifiers and
  was never sent; only the *kinds* are recorded, never the query text;
- `connector.circuit_opened` / `connector.circuit_closed` — a source's circuit breaker changed
  state (`breaker.py`); while it is open the source is skipped without a request.

Writing the audit row must never turn a soft failure into a hard one: a database error here is
logged and swallowed. Without a ledger (unit tests, tools) only the log line is written.
"""

from __future__ import annotations

import uuid

from research_ledger import AuditAction, Ledger
from research_platform.logging import get_logger

log = get_logger(__name__)

SERVICE = "connector"
DEGRADED = AuditAction.CONNECTOR_DEGRADED
PHI_REFUSED = AuditAction.CONNECTOR_PHI_REFUSED
CIRCUIT = {
    "open": AuditAction.CONNECTOR_CIRCUIT_OPENED,
    "closed": AuditAction.CONNECTOR_CIRCUIT_CLOSED,
}


class Incidents:
    """Logs and audits degraded sources and refused queries."""

    def __init__(self, ledger: Ledger | None = None) -> None:
        self._ledger = ledger

    async def degraded(
        self,
        source: str,
        reason: str,
        *,
        operation: str = "search",
        detail: str = "",
        task_id: uuid.UUID | None = None,
    ) -> None:
        """Record that `source` gave no answer to `operation` because of `reason` (key-free text)."""
        log.warning(
            "source degraded",
            source=source,
            reason=reason,
            operation=operation,
            detail=detail[:300],
        )
        await self._audit(
            DEGRADED,
            {"source": source, "reason": reason, "operation": operation, "detail": detail[:500]},
            task_id,
        )

    async def refused(
        self, source: str, kinds: list[str], *, task_id: uuid.UUID | None = None
    ) -> None:
        """Record that a query for `source` was refused because it carries identifiers of `kinds`."""
        log.warning("query refused: personal identifiers", source=source, kinds=kinds)
        await self._audit(PHI_REFUSED, {"source": source, "kinds": kinds}, task_id)

    async def circuit_changed(self, source: str, state: str, payload: dict[str, object]) -> None:
        """Record that `source`'s circuit is now `state` (`open` or `closed`); `breaker.py` calls this."""
        await self._audit(CIRCUIT[state], payload, None)

    async def _audit(
        self, action: AuditAction, payload: dict[str, object], task_id: uuid.UUID | None
    ) -> None:
        if self._ledger is None:
            return
        try:
            async with self._ledger.unit_of_work(service=SERVICE) as uow:
                uow.audit(
                    action,
                    task_id=task_id,
                    subject_ids={"source": payload.get("source")},
                    payload=payload,
                )
        except Exception as exc:  # noqa: BLE001 - the audit must not turn a soft failure into a hard one
            log.error("audit write failed", action=action, error=type(exc).__name__)
