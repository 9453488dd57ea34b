"""The one audit writer: a row in `audit_events`, staged in the caller's transaction.

Callers pass the session that carries the state change, so both commit together or neither
does. `record` stages one row; `record_many` writes a batch in one INSERT (the agents' findings,
hundreds per statement in the librarian's walk) with the same checks. The writer accepts only `AuditAction` members (a plain string raises `TypeError`),
validates the payload against the catalogue's schema for that action (`ValueError` on a
mismatch — a programming error, caught by the tests), and makes every string safe for
Postgres jsonb: `\\u0000` and lone surrogates (bytes decoded with `surrogateescape`, broken
UTF-16 from a client) are replaced by U+FFFD, because jsonb refuses the first and asyncpg
cannot encode the second — either would turn an audit write into a crash loop.

Audit rows never hold raw content (`research_ledger.deidentified`): a payload key naming a
message body or the patient context (`body`, `raw`, `raw_body`, `patient_ref`) is refused like
any schema mismatch, and a person's text (`question`, `topic`, `claim`, `prompt`, `keywords`,
`idempotency_key`, a key's `name`: `PERSON_TEXT_KEYS`) is stored as a digest and a size.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.catalogue import AuditAction, payload_schema
from research_ledger.deidentified import PERSON_TEXT_KEYS, RAW_CONTENT_KEYS, digest
from research_ledger.errors import AuditPayloadError
from research_ledger.tables import AuditEvent

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def storable(value: Any) -> Any:  # noqa: PLR0911 - a converter: each type answers at once
    """`value` as plain JSON types with every string safe for jsonb (see the module docstring)."""
    if isinstance(value, str):
        return _UNSTORABLE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {storable(str(k)): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [storable(v) for v in value]
    if isinstance(value, bytes):
        return storable(value.decode("utf-8", "replace"))
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, bool | int | float) or value is None:
        return value
    if hasattr(value, "value"):  # enums
        return storable(value.value)
    return storable(str(value))


def checked_payload(action: AuditAction, payload: dict[str, Any] | None) -> dict[str, Any]:
    """The payload of `action`, validated against its schema and made storable."""
    if not isinstance(action, AuditAction):
        raise TypeError(
            f"audit actions come from research_ledger.catalogue.AuditAction, not {action!r}"
        )
    plain = storable(payload or {})
    raw = RAW_CONTENT_KEYS & set(plain)
    if raw:
        raise AuditPayloadError(
            f"payload of {action.value} holds raw content ({', '.join(sorted(raw))}): store a digest"
        )
    for key in PERSON_TEXT_KEYS & set(plain):  # a person's words never rest in the audit log
        if isinstance(plain[key], str):
            plain[key] = digest(plain[key])
        elif isinstance(plain[key], list):
            plain[key] = [digest(str(item)) for item in plain[key]]
    try:
        model = payload_schema(action).model_validate(plain)
    except ValidationError as exc:
        raise AuditPayloadError(
            f"payload of {action.value} does not match its schema: {exc}"
        ) from exc
    stored: dict[str, Any] = storable(model.model_dump(mode="json", exclude_unset=True))
    return stored


def record(
    session: AsyncSession,
    action: AuditAction,
    *,
    service: str,
    task_id: uuid.UUID | None = None,
    claim_id: uuid.UUID | None = None,
    subject_ids: dict[str, Any] | None = None,
    payload: dict[str, Any] | None = None,
) -> AuditEvent:
    """Stage an audit row for `action` in `session` (it commits with the caller's transaction)."""
    event = AuditEvent(
        service=service,
        action=action.value if isinstance(action, AuditAction) else action,
        task_id=task_id,
        claim_id=claim_id,
        subject_ids=storable(subject_ids or {}),
        payload=checked_payload(action, payload),
    )
    session.add(event)
    return event


@dataclass(frozen=True)
class Entry:
    """One audit row of a batch (`record_many`): what `record` takes, less the session and service."""

    action: AuditAction
    task_id: uuid.UUID | None = None
    claim_id: uuid.UUID | None = None
    subject_ids: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None


async def record_many(session: AsyncSession, entries: Iterable[Entry], *, service: str) -> int:
    """Write one audit row per entry in one INSERT, now, in the caller's transaction (so the rows
    commit with the changes they describe); each payload is checked as `record` checks it.
    Returns how many rows were written."""
    rows = []
    for entry in entries:
        payload = checked_payload(
            entry.action, entry.payload
        )  # TypeError unless a catalogue member
        rows.append(
            {
                "service": service,
                "action": entry.action.value,
                "task_id": entry.task_id,
                "claim_id": entry.claim_id,
                "subject_ids": storable(entry.subject_ids or {}),
                "payload": payload,
            }
        )
    if rows:
        await session.execute(insert(AuditEvent), rows)
    return len(rows)
