"""security: audit rows keep a digest of an Idempotency-Key and of an API key's name; key names de-identified

Revision ID: 0011
Revises: 0010

An `Idempotency-Key` header is free text a client types (up to 200 characters) and an API key's
name is a label, often a person's; both were stored verbatim in `research.task.submitted` and
`research.admin.key_created` rows and served by `GET /audit`. Since this revision the audit
writer stores them as a digest and a size like every other person's text
(`research_ledger.deidentified.PERSON_TEXT_KEYS`), and a key's label is de-identified before it
is stored in `api_keys`. The rows written before are rewritten here (the audit log's append-only
trigger is disabled for this transaction's UPDATE only, as in 0006 and 0010).
Downgrade cannot restore what was digested: no-op.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from research_privacy.boundary import digest, person_text

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
DIGESTED = {"research.task.submitted": "idempotency_key", "research.admin.key_created": "name"}


def scrub(conn: sa.Connection) -> None:
    for key in conn.execute(sa.text("SELECT id, name FROM api_keys")).all():  # one row per key: few
        if person_text(key.name) != key.name:
            conn.execute(
                sa.text("UPDATE api_keys SET name = :name WHERE id = :id"),
                {"name": person_text(key.name), "id": key.id},
            )
    conn.execute(sa.text("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only"))
    for action, key in DIGESTED.items():
        after = 0
        while True:
            rows = conn.execute(
                sa.text(
                    "SELECT id, payload ->> :key AS value FROM audit_events WHERE action = :action "
                    "AND jsonb_typeof(payload -> :key) = 'string' AND id > :after ORDER BY id LIMIT :batch"
                ),
                {"key": key, "action": action, "after": after, "batch": BATCH},
            ).all()
            if not rows:
                break
            for row in rows:
                if not row.value.startswith("sha256:"):
                    conn.execute(
                        sa.text(
                            "UPDATE audit_events SET payload = jsonb_set(payload, CAST(:path AS text[]), "
                            "CAST(:value AS jsonb)) WHERE id = :id"
                        ),
                        {"path": [key], "value": json.dumps(digest(row.value)), "id": row.id},
                    )
            after = rows[-1].id
    conn.execute(sa.text("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only"))


def upgrade() -> None:
    scrub(op.get_bind())


def downgrade() -> None:
    """Digested values cannot be restored."""
