"""Normalise the librarian's input: one row of the batch assessment per claim → `ClaimHealth`."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from research_platform.errors import PrepareError


@dataclass(frozen=True)
class OpenFinding:
    """An unresolved librarian finding already recorded for the claim."""

    finding_id: uuid.UUID
    kind: str


@dataclass(frozen=True)
class ClaimHealth:
    """What the set-based assessment found about one active claim's provenance and decay."""

    claim_id: uuid.UUID
    created_at: datetime
    supports: int
    missing: tuple[str, ...]
    decay_at: datetime | None
    decaying: bool
    open: tuple[OpenFinding, ...]


def claim_health(row: Mapping[str, Any]) -> ClaimHealth:
    """One assessment row as `ClaimHealth`; a row without a claim id is a bug upstream."""
    if row.get("id") is None:
        raise PrepareError("assessment row without a claim id")
    return ClaimHealth(
        claim_id=row["id"],
        created_at=row["created_at"],
        supports=int(row.get("supports") or 0),
        missing=tuple(sorted(m for m in (row.get("missing") or []) if m)),
        decay_at=row.get("decay_at"),
        decaying=bool(row.get("decaying")),
        open=tuple(
            OpenFinding(uuid.UUID(str(f["id"])), str(f["kind"])) for f in (row.get("open") or [])
        ),
    )
