"""security: scrub identifiers from rows written before the ledger de-identified what it stores

Revision ID: 0006
Revises: 0005

Since this revision the ledger stores questions de-identified (`research_ledger.deidentified`)
and audit rows never hold raw content. Rows written earlier are rewritten here, in batches:
- `research_tasks.question`, `.entity` and `request` (its `question` / `entity`; any
  `patient_ref` removed), `memory_claims.question`: de-identified;
- `findings.payload` (the replicator copies a claim's question) and `audit_events.payload`:
  `body` / `raw` / `raw_body` / `patient_ref` keys removed (a dead letter keeps `sha256` and
  `size`), a `question` de-identified.

`audit_events` is append-only (trigger `audit_events_append_only` refuses UPDATE and DELETE).
The scrub is the one sanctioned exception: the trigger is disabled for this transaction's
UPDATE only and enabled again before the migration commits (DDL is transactional in Postgres,
so a failure leaves the trigger as it was). Downgrade cannot restore what was scrubbed: no-op.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import sqlalchemy as sa
from alembic import op

from research_ledger.deidentified import RAW_CONTENT_KEYS
from research_privacy.boundary import person_text as deidentified

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000


def _pages(conn: sa.Connection, query: str, **params: object) -> Iterator[Sequence[sa.Row]]:
    """Keyset pages of `query` (it takes `:after` and `:batch` and orders by its first column `id`)."""
    after = None
    while True:
        rows = conn.execute(sa.text(query), {**params, "after": after, "batch": BATCH}).all()
        if not rows:
            return
        yield rows
        after = rows[-1][0]


def _json(value: object) -> dict:
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def _scrub_tasks(conn: sa.Connection) -> None:
    query = (
        "SELECT id, question, entity, request FROM research_tasks "
        "WHERE (CAST(:after AS uuid) IS NULL OR id > CAST(:after AS uuid)) ORDER BY id LIMIT :batch"
    )
    for rows in _pages(conn, query):
        for row in rows:
            question = deidentified(row.question)
            entity = deidentified(row.entity) if row.entity else row.entity
            before = _json(row.request)
            request = {k: v for k, v in before.items() if k not in RAW_CONTENT_KEYS}
            for key in ("question", "entity"):
                if isinstance(request.get(key), str):
                    request[key] = deidentified(request[key])
            if (question, entity, request) != (row.question, row.entity, before):
                conn.execute(
                    sa.text(
                        "UPDATE research_tasks SET question = :q, entity = :e, request = CAST(:r AS jsonb) WHERE id = :id"
                    ),
                    {"q": question, "e": entity, "r": json.dumps(request), "id": row.id},
                )


def _scrub_claims(conn: sa.Connection) -> None:
    query = (
        "SELECT id, question FROM memory_claims "
        "WHERE (CAST(:after AS uuid) IS NULL OR id > CAST(:after AS uuid)) ORDER BY id LIMIT :batch"
    )
    for rows in _pages(conn, query):
        for row in rows:
            question = deidentified(row.question)
            if question != row.question:
                conn.execute(
                    sa.text("UPDATE memory_claims SET question = :q WHERE id = :id"),
                    {"q": question, "id": row.id},
                )


def _scrub_payloads(conn: sa.Connection, table: str, id_type: str) -> None:
    """Drop raw-content keys from `table.payload` and de-identify a `question` in it."""
    query = (
        f"SELECT id, payload FROM {table} WHERE payload ?| CAST(:keys AS text[]) "
        f"AND (CAST(:after AS {id_type}) IS NULL OR id > CAST(:after AS {id_type})) ORDER BY id LIMIT :batch"
    )
    for rows in _pages(conn, query, keys=sorted(RAW_CONTENT_KEYS | {"question"})):
        for row in rows:
            before = _json(row.payload)
            payload = {k: v for k, v in before.items() if k not in RAW_CONTENT_KEYS}
            if isinstance(payload.get("question"), str):
                payload["question"] = deidentified(payload["question"])
            if payload != before:
                conn.execute(
                    sa.text(f"UPDATE {table} SET payload = CAST(:p AS jsonb) WHERE id = :id"),
                    {"p": json.dumps(payload), "id": row.id},
                )


def scrub(conn: sa.Connection) -> None:
    """Rewrite every stored question de-identified and drop raw content from audit payloads."""
    _scrub_tasks(conn)
    _scrub_claims(conn)
    _scrub_payloads(conn, "findings", "uuid")
    conn.execute(sa.text("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only"))
    _scrub_payloads(conn, "audit_events", "bigint")
    conn.execute(sa.text("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only"))


def upgrade() -> None:
    scrub(op.get_bind())


def downgrade() -> None:
    """Scrubbed values cannot be restored."""
