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

The digest is keyed (`hmac:<16 hex> chars:<n>`): an HMAC, under the installation secret
(`research_platform.installation`), of the text's SHA-256 digest, so every reader sees the same
value for the same text but nobody without the secret can test a guess (a short identifier was
recoverable from a plain hash by enumeration). Migration 0016 keyed the plain digests written
before, which gives the same value a new row gets for the same text.
"""

from __future__ import annotations

from typing import Any

from research_platform import installation
from research_privacy.boundary import digest as plain_digest
from research_privacy.boundary import require_clean
from research_privacy.errors import UncleanText

__all__ = [
    "PERSON_FIELDS",
    "PERSON_TEXT_KEYS",
    "RAW_CONTENT_KEYS",
    "RECORD_REF_FIELDS",
    "UncleanText",
    "check_report",
    "clean",
    "clean_fields",
    "clean_or_none",
    "digest",
    "keyed_digest",
]

# Audit payload keys that name raw content: refused by the audit writer (a body is described by
# its digest and size; the bytes wait on the dead-letter stream under its retention).
RAW_CONTENT_KEYS = frozenset({"body", "raw", "raw_body", "patient_ref", "patient_context"})
# Audit payload keys holding a person's text: stored as a digest and a size, never the words.
# `idempotency_key` (a client's free-text header) and `name` (an API key's label, often a person's)
# are typed by a person too.
PERSON_TEXT_KEYS = frozenset(
    {
        "question",
        "topic",
        "claim",
        "prompt",
        "keywords",
        "subject_key",
        "statement_text",
        "idempotency_key",
        "name",
    }
)
# The fields of a stored request that a person typed (`PersonText` in the contracts: the boundary
# de-identified them). Only these are checked: ids, hashes, run ids, timestamps, filters and the
# engine's own JSON are never read as a person's text — a UUID holding "0242-4616" is no phone.
PERSON_FIELDS = frozenset(
    {"question", "patient_context", "entity", "topic", "claim", "prompt", "keywords", "venue"}
)
# A `save_to` record reference: its id may be a patient's number, so it passed the boundary too.
RECORD_REF_FIELDS = frozenset({"id"})


def keyed_digest(plain: str, secret: bytes | None = None) -> str:
    """A plain digest (`sha256:<hex> chars:<n>`) keyed under the installation secret:
    `hmac:<16 hex of HMAC(secret, "sha256:<hex>")> chars:<n>`."""
    head, _, size = plain.partition(" ")
    keyed = installation.keyed(head, secret).hex()[:16]
    return f"hmac:{keyed} {size}".rstrip()


def digest(text: str) -> str:
    """What an audit row keeps of a person's text: its keyed digest and size, never the words."""
    return keyed_digest(plain_digest(text))


def clean(text: str, *, what: str) -> str:
    """`text` unchanged when no identifier is left in it; `UncleanText` otherwise."""
    require_clean(text, what=what)
    return text


def clean_or_none(text: str | None, *, what: str) -> str | None:
    return clean(text, what=what) if text else text


def clean_fields(value: Any, *, what: str, fields: frozenset[str] = PERSON_FIELDS) -> Any:
    """`value` unchanged when none of the strings under `fields` (at any depth) holds an identifier;
    `UncleanText` otherwise. Strings under any other key are not read."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in fields:
                _clean_all(item, what=f"{what} ({key})")
            else:
                clean_fields(item, what=what, fields=fields)
    elif isinstance(value, list | tuple):
        for item in value:
            clean_fields(item, what=what, fields=fields)
    return value


def _clean_all(value: Any, *, what: str) -> None:
    if isinstance(value, str):
        clean(value, what=what)
    elif isinstance(value, dict):
        for item in value.values():
            _clean_all(item, what=what)
    elif isinstance(value, list | tuple):
        for item in value:
            _clean_all(item, what=what)


def check_report(
    *,
    subject: str,
    subject_key: str,
    request: dict[str, Any] | None = None,
    save_to: dict[str, Any] | None = None,
) -> None:
    """What `Reports.open` checks before it stores a report, callable before anything is published:
    the gateway runs it first, so a refusal is one 422 and no command goes out (`UncleanText`)."""
    clean(subject, what="a report's subject")
    clean(subject_key[:200], what="a report's subject key")
    clean_fields(request or {}, what="a report's request")
    clean_fields(save_to or {}, what="a report's save_to", fields=RECORD_REF_FIELDS)
