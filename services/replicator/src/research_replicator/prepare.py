"""Normalise the replicator's inputs: a due claim from the ledger and the researcher's reply."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from research_contracts import EvidenceRefreshed, Support
from research_platform.errors import PrepareError


@dataclass(frozen=True)
class DueClaim:
    """An aged active claim, with the supports it was accepted on."""

    claim_id: uuid.UUID
    question: str
    entity: str
    statement: str
    supports: tuple[Support, ...]


def due_claim(row: Mapping[str, Any]) -> DueClaim:
    supports = []
    for raw in row.get("supports") or []:
        try:
            supports.append(Support.model_validate(raw))
        except ValidationError:
            continue  # a malformed support cannot be replicated; the librarian reports provenance
    question = str(row.get("question") or "").strip()
    if len(question) < 3:
        raise PrepareError(f"claim {row.get('id')} has no question to re-run")
    return DueClaim(
        row["id"],
        question,
        str(row.get("entity") or ""),
        str(row.get("statement") or ""),
        tuple(supports),
    )


def refreshed(body: bytes) -> EvidenceRefreshed:
    """The researcher's reply; an unreadable one is a failed re-run."""
    try:
        return EvidenceRefreshed.model_validate_json(body)
    except ValidationError as exc:
        return EvidenceRefreshed(error=f"unreadable rerun reply: {exc.error_count()} errors")
