"""What the ledger keeps of text a person typed: only what passed the privacy boundary.

A question, topic, claim or prompt may name a patient (name, record number, date of birth,
phone, address). The boundary (`research_privacy.boundary`) de-identifies it where it enters —
the message contracts do it when a command is parsed, at the gateway and again in the
consuming service — so the ledger only ever receives de-identified text. The ledger checks
that for every writer: `clean` refuses (`UncleanText`) a person's text in which an identifier
is still found, instead of storing it; nothing is quietly scrubbed here, so a route that forgot
the boundary fails loudly. Audit rows keep no person's text at all: `question`, `topic`,
`claim`, `prompt`, `keywords`, an `Idempotency-Key` and an API key's `name` become a digest
and a size. `patient_ref` is never stored. Migrations 0006, 0010 and 0011 scrubbed the rows
written before.
"""

from __future__ import annotations

from typing import Any

from research_privacy.boundary import UncleanText, digest, require_clean

__all__ = ["PERSON_TEXT_KEYS", "RAW_CONTENT_KEYS", "UncleanText", "clean", "clean_json", "digest"]

# Audit payload keys that name raw content: refused by the audit writer (a body is described by
# its digest and size; the bytes wait on the dead-letter stream under its retention).
RAW_CONTENT_KEYS = frozenset({"body", "raw", "raw_body", "patient_ref", "patient_context"})
# Audit payload keys holding a person's text: stored as a digest and a size, never the words.
# `idempotency_key` (a client's free-text header) and `name` (an API key's label, often a person's)
# are typed by a person too.
PERSON_TEXT_KEYS = frozenset({"question", "topic", "claim", "prompt", "keywords", "subject_key", "statement_text",
                              "idempotency_key", "name"})


def clean(text: str, *, what: str) -> str:
    """`text` unchanged when no identifier is left in it; `UncleanText` otherwise."""
    require_clean(text, what=what)
    return text


def clean_or_none(text: str | None, *, what: str) -> str | None:
    return clean(text, what=what) if text else text


def clean_json(value: Any, *, what: str) -> Any:
    """`value` unchanged when none of its strings holds an identifier; `UncleanText` otherwise."""
    if isinstance(value, str):
        clean(value, what=what)
    elif isinstance(value, dict):
        for item in value.values():
            clean_json(item, what=what)
    elif isinstance(value, list | tuple):
        for item in value:
            clean_json(item, what=what)
    return value
