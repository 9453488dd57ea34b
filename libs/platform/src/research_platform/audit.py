"""The audit writer: adds a row to `audit_events` inside the caller's transaction.

Callers pass the same session they use for the state change, so both commit together or
neither does.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from research_platform.models import AuditEvent


def record(
    session: AsyncSession,
    *,
    service: str,
    action: str,
    task_id: uuid.UUID | None = None,
    claim_id: uuid.UUID | None = None,
    subject_ids: dict[str, Any] | None = None,
    payload: dict[str, Any] | None = None,
) -> AuditEvent:
    """Stage an audit row for `action` (e.g. `research.claim.proposed`) in `session`."""
    event = AuditEvent(
        service=service,
        action=action,
        task_id=task_id,
        claim_id=claim_id,
        subject_ids=_jsonable(subject_ids or {}),
        payload=_jsonable(payload or {}),
    )
    session.add(event)
    return event


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
