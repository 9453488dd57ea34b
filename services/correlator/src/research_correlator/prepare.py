"""Normalise an entity cluster read from the ledger into what the detectors need."""

from __future__ import annotations

import statistics
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from research_platform.errors import PrepareError


@dataclass(frozen=True)
class ClusterClaim:
    """One active claim of the cluster, with the publication years of the sources it cites."""

    claim_id: uuid.UUID
    statement: str
    confidence: float
    source_ids: tuple[str, ...]
    years: tuple[int, ...]
    created_at: datetime | None = None

    @property
    def evidence_year(self) -> float | None:
        """Median publication year of the supporting sources (None when none is known)."""
        return float(statistics.median(self.years)) if self.years else None


@dataclass(frozen=True)
class Cluster:
    """An entity with at least two active claims, plus the other entities the ledger knows."""

    entity: str
    claims: tuple[ClusterClaim, ...]
    known_entities: frozenset[str]

    @property
    def claim_ids(self) -> tuple[uuid.UUID, ...]:
        return tuple(c.claim_id for c in self.claims)


def cluster(
    entity: str,
    rows: Iterable[Mapping[str, Any]],
    source_years: Mapping[str, int],
    known_entities: Iterable[str],
) -> Cluster:
    """Build a `Cluster` from claim rows (`id`, `statement`, `confidence`, `supports`, `created_at`)."""
    claims = []
    for row in rows:
        supports = row.get("supports") or []
        if not isinstance(supports, list):
            raise PrepareError(f"claim {row.get('id')} has malformed supports")
        source_ids = tuple(
            dict.fromkeys(
                str(s["source_id"]) for s in supports if isinstance(s, dict) and s.get("source_id")
            )
        )
        years = tuple(source_years[s] for s in source_ids if source_years.get(s))
        claims.append(
            ClusterClaim(
                claim_id=row["id"],
                statement=str(row.get("statement") or ""),
                confidence=float(row.get("confidence") or 0.0),
                source_ids=source_ids,
                years=years,
                created_at=row.get("created_at"),
            )
        )
    others = frozenset(
        e.strip()
        for e in known_entities
        if e and e.strip() and e.strip().lower() != entity.strip().lower()
    )
    return Cluster(entity=entity, claims=tuple(claims), known_entities=others)
