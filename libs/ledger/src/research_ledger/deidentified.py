"""What the ledger keeps of text a person typed: the de-identified form, never the raw one.

A question may name a patient (name, record number, date of birth, phone, address). The bus
carries the raw question to the researcher, which needs the patient context to build its
(de-identified) prompt; the ledger — tables that outlive every stream retention — stores only
`deidentified(text)`: each identifier replaced by a numbered placeholder (`[NAME_1]`). The
ledger applies it itself (`submit`, `start`, `propose`, the audit writer's `question` fields),
so every mode and every caller gets it without having to remember. `patient_ref` is never
stored at all. Migration 0006 scrubbed the rows written before this existed.
"""

from __future__ import annotations

from research_privacy import deidentify

# Audit payload keys that name raw content: refused by the audit writer (a body is described by
# its digest and size; the bytes wait on the dead-letter stream under its retention).
RAW_CONTENT_KEYS = frozenset({"body", "raw", "raw_body", "patient_ref"})
# Audit payload keys holding a person's question: stored de-identified.
QUESTION_KEYS = frozenset({"question"})


def deidentified(text: str) -> str:
    """`text` with every identifier the de-identifier finds replaced by a placeholder.

    Idempotent: placeholders already in `text` are kept and never reused for another value.
    """
    return deidentify(text).text if text else text


def deidentified_or_none(text: str | None) -> str | None:
    return deidentified(text) if text else text
