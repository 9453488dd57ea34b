"""security: the audit log's digests of a person's text are keyed by the installation secret

Revision ID: 0016
Revises: 0015

An audit row kept a plain SHA-256 digest (`sha256:<16 hex> chars:<n>`) of an `Idempotency-Key`,
a question, a topic, a key's label (`research_ledger.deidentified.PERSON_TEXT_KEYS`), readable by
every reader: a short identifier (`MRN-00123456`) was recovered by hashing the 10^8 candidates.
New rows keep `hmac:<16 hex of HMAC(secret, "sha256:<16 hex>")> chars:<n>` under the
installation secret (`research_platform.installation`, kept out of the database); this revision
rewrites every plain digest already stored the same way, so an old row and a new row of the same
text still agree, and nothing stored can be tested against a guess without the secret.

The audit log is append-only: a trigger refuses UPDATE and DELETE. As in 0006, 0010 and 0011,
this migration disables `audit_events_append_only` inside its own transaction, rewrites only
the digest values (nothing else in a row changes, no row is added or removed), and enables the
trigger again before the transaction commits; `ALTER TABLE` holds the table's exclusive lock
until then, so no other writer ever sees the trigger off. Downgrade cannot undo an HMAC: no-op.

The secret is the one `upgrade(installation_secret=...)` passes (`research-engine up` and
`migrate` do), else the settings' (`INSTALLATION_SECRET`, `INSTALLATION_SECRET_FILE`,
`<data_dir>/installation.key`), read only when there are rows to rewrite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from research_ledger.deidentified import PERSON_TEXT_KEYS, keyed_digest
from research_platform.installation import installation_secret
from research_platform.settings import Settings

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
PLAIN = re.compile(r"^sha256:[0-9a-f]{16}( chars:\d+)?$")


def _plain(value: Any) -> bool:
    """Whether `value` is, or holds, a plain digest."""
    if isinstance(value, list):
        return any(_plain(item) for item in value)
    return isinstance(value, str) and PLAIN.match(value) is not None


def _keyed(value: Any, secret: bytes) -> Any:
    if isinstance(value, str) and PLAIN.match(value):
        return keyed_digest(value, secret)
    if isinstance(value, list):
        return [_keyed(item, secret) for item in value]
    return value


def rekey(conn: sa.Connection, secret: bytes | None) -> int:
    """Key every plain digest under `PERSON_TEXT_KEYS`; returns the rows rewritten."""
    keys = sorted(PERSON_TEXT_KEYS)
    rewritten, after, trigger_off = 0, 0, False
    while True:
        rows = conn.execute(
            sa.text(
                "SELECT id, payload FROM audit_events WHERE payload ?| CAST(:keys AS text[]) "
                "AND id > :after ORDER BY id LIMIT :batch"
            ),
            {"keys": keys, "after": after, "batch": BATCH},
        ).all()
        if not rows:
            break
        for row in rows:
            payload = dict(row.payload)
            plain = {k: payload[k] for k in keys if _plain(payload.get(k))}
            if not plain:
                continue
            secret = secret or installation_secret(Settings())
            keyed = {k: _keyed(v, secret) for k, v in plain.items()}
            if not trigger_off:
                conn.execute(
                    sa.text("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
                )
                trigger_off = True
            conn.execute(
                sa.text("UPDATE audit_events SET payload = CAST(:payload AS jsonb) WHERE id = :id"),
                {"payload": json.dumps({**payload, **keyed}), "id": row.id},
            )
            rewritten += 1
        after = rows[-1].id
    if trigger_off:
        conn.execute(sa.text("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only"))
    return rewritten


def upgrade() -> None:
    rekey(op.get_bind(), context.config.attributes.get("installation_secret"))


def downgrade() -> None:
    """An HMAC cannot be undone."""
