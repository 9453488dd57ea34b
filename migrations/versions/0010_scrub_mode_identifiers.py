"""security: scrub identifiers that the modes stored before the privacy boundary moved to the edge

Revision ID: 0010
Revises: 0009

Since this revision every text a person types is de-identified where it enters (the message
contracts, `research_privacy.boundary`), the ledger refuses text that did not pass, and audit
rows keep a digest of a person's text, never the words. Rows written before by the modes are
rewritten here:
- `reports.subject` / `subject_key` / `request` / `save_to` (a review topic, a claim to verify,
  a source-list prompt and keywords): de-identified; the identifiers found in a report's subject
  and request are then replaced by the same placeholders wherever its versions repeat them
  (Markdown, structured content, peer review, citation check, diff) — the literature quoted
  in them is left as it is;
- `memory_claims.question` / `entity`, `watched_claims.claim`, `source_list_iterations.query`:
  de-identified;
- `audit_events.payload`: `question`, `topic`, `claim`, `prompt`, `keywords` and `subject_key`
  replaced by a digest and a size (the append-only trigger is disabled for this transaction's
  UPDATE only, as in 0006).
Downgrade cannot restore what was scrubbed: no-op.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from research_privacy import Deidentified
from research_privacy.boundary import digest, person_text

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
PERSON_TEXT_KEYS = ("question", "topic", "claim", "prompt", "keywords", "subject_key")


def _pages(conn: sa.Connection, query: str, **params: object) -> Iterator[Sequence[sa.Row]]:
    """Keyset pages of `query` (it takes `:after` and `:batch` and orders by its first column)."""
    after = None
    while True:
        rows = conn.execute(sa.text(query), {**params, "after": after, "batch": BATCH}).all()
        if not rows:
            return
        yield rows
        after = rows[-1][0]


def _walk(value: Any, change: Callable[[str], str]) -> Any:
    """`value` (JSON) with `change` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _walk(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    return value


def _loaded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _replacer(table: Deidentified) -> Callable[[str], str]:
    """Replaces each identifier value the table learnt by its placeholder (longest first)."""
    pairs = sorted(
        ((v, p) for p, v in table.placeholders.items() if len(v) >= 3),
        key=lambda pair: -len(pair[0]),
    )

    def change(text: str) -> str:
        for value, placeholder in pairs:
            text = text.replace(value, placeholder)
        return text

    return change


def _scrub_reports(conn: sa.Connection) -> None:
    query = (
        "SELECT id, subject, subject_key, request, save_to FROM reports "
        "WHERE (CAST(:after AS uuid) IS NULL OR id > CAST(:after AS uuid)) ORDER BY id LIMIT :batch"
    )
    for rows in _pages(conn, query):
        for row in rows:
            table = Deidentified(text="")
            subject = person_text(row.subject, into=table)
            request = _walk(_loaded(row.request) or {}, lambda s, t=table: person_text(s, into=t))
            save_to = _walk(_loaded(row.save_to) or {}, lambda s, t=table: person_text(s, into=t))
            change = _replacer(table)
            subject_key = change(person_text(row.subject_key))
            if not table.placeholders and subject_key == row.subject_key:
                continue
            conn.execute(
                sa.text(
                    "UPDATE reports SET subject = :s, subject_key = :k, request = CAST(:r AS jsonb), "
                    "save_to = CAST(:t AS jsonb) WHERE id = :id"
                ),
                {
                    "s": subject,
                    "k": subject_key[:200],
                    "r": json.dumps(request),
                    "t": json.dumps(save_to),
                    "id": row.id,
                },
            )
            _scrub_versions(conn, row.id, change)


def _scrub_versions(conn: sa.Connection, report_id: object, change: Callable[[str], str]) -> None:
    columns = ("content", "markdown", "review", "citation_check", "diff")
    for version in conn.execute(
        sa.text(f"SELECT version, {', '.join(columns)} FROM report_versions WHERE report_id = :id"),
        {"id": report_id},
    ).all():
        values = {
            c: _walk(
                getattr(version, c) if c == "markdown" else _loaded(getattr(version, c)), change
            )
            for c in columns
        }
        conn.execute(
            sa.text(
                "UPDATE report_versions SET content = CAST(:content AS jsonb), markdown = :markdown, "
                "review = CAST(:review AS jsonb), citation_check = CAST(:citation_check AS jsonb), "
                "diff = CAST(:diff AS jsonb) WHERE report_id = :id AND version = :version"
            ),
            {
                **{c: json.dumps(values[c]) for c in ("content", "review", "citation_check")},
                "diff": json.dumps(values["diff"]) if values["diff"] is not None else None,
                "markdown": values["markdown"],
                "id": report_id,
                "version": version.version,
            },
        )


def _scrub_column(
    conn: sa.Connection, table: str, key: str, key_type: str, columns: tuple[str, ...]
) -> None:
    query = (
        f"SELECT {key}, {', '.join(columns)} FROM {table} "
        f"WHERE (CAST(:after AS {key_type}) IS NULL OR {key} > CAST(:after AS {key_type})) ORDER BY {key} LIMIT :batch"
    )
    for rows in _pages(conn, query):
        for row in rows:
            before = {c: getattr(row, c) for c in columns}
            after = {c: person_text(v) if isinstance(v, str) else v for c, v in before.items()}
            if after != before:
                sets = ", ".join(f"{c} = :{c}" for c in columns)
                conn.execute(
                    sa.text(f"UPDATE {table} SET {sets} WHERE {key} = :key"),
                    {**after, "key": getattr(row, key)},
                )


def _scrub_audit(conn: sa.Connection) -> None:
    query = (
        "SELECT id, payload FROM audit_events WHERE payload ?| CAST(:keys AS text[]) "
        "AND (CAST(:after AS bigint) IS NULL OR id > CAST(:after AS bigint)) ORDER BY id LIMIT :batch"
    )
    for rows in _pages(conn, query, keys=list(PERSON_TEXT_KEYS)):
        for row in rows:
            payload = dict(_loaded(row.payload) or {})
            for key in PERSON_TEXT_KEYS:
                value = payload.get(key)
                if isinstance(value, str) and not value.startswith("sha256:"):
                    payload[key] = digest(value)
                elif isinstance(value, list):
                    payload[key] = [
                        v if str(v).startswith("sha256:") else digest(str(v)) for v in value
                    ]
            conn.execute(
                sa.text("UPDATE audit_events SET payload = CAST(:p AS jsonb) WHERE id = :id"),
                {"p": json.dumps(payload), "id": row.id},
            )


def _scrub_iterations(conn: sa.Connection) -> None:
    for row in conn.execute(
        sa.text("SELECT run_id, iteration, query FROM source_list_iterations")
    ).all():
        query = person_text(row.query)
        if query != row.query:
            conn.execute(
                sa.text(
                    "UPDATE source_list_iterations SET query = :q WHERE run_id = :r AND iteration = :i"
                ),
                {"q": query, "r": row.run_id, "i": row.iteration},
            )


def scrub(conn: sa.Connection) -> None:
    _scrub_reports(conn)
    _scrub_iterations(conn)
    _scrub_column(conn, "memory_claims", "id", "uuid", ("question", "entity"))
    _scrub_column(conn, "watched_claims", "verification_id", "uuid", ("claim",))
    conn.execute(sa.text("ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only"))
    _scrub_audit(conn)
    conn.execute(sa.text("ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only"))


def upgrade() -> None:
    scrub(op.get_bind())


def downgrade() -> None:
    """Scrubbed values cannot be restored."""
