"""Shape the librarian's decisions as the writes the ledger applies: new findings (their payload
is also the audit payload) and the resolutions of stale ones."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from research_ledger.findings import NewFinding
from research_librarian.experiment import APPROACHING_DECAY, Triage
from research_librarian.prepare import ClaimHealth


@dataclass
class Settlement:
    """Writes waiting for one `settle` statement: findings to open, findings to resolve (with why)."""

    opened: list[NewFinding] = field(default_factory=list)
    resolve: dict[uuid.UUID, dict[str, Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.opened) + len(self.resolve)

    def extend(self, other: Settlement) -> None:
        self.opened.extend(other.opened)
        self.resolve.update(other.resolve)


def settlement(changes: Triage) -> Settlement:
    """What a batch's triage writes: a finding per new problem, a resolution per stale finding."""
    return Settlement(
        opened=[finding(health, kind) for health, kind in changes.opened],
        resolve={r.finding.finding_id: {"now": r.now or "healthy"} for r in changes.resolved},
    )


def finding(health: ClaimHealth, kind: str) -> NewFinding:
    """The finding recorded for `health`: missing source ids or the decay date, as evidence."""
    payload: dict[str, Any] = {"supports": health.supports}
    if kind == APPROACHING_DECAY and health.decay_at is not None:
        payload["decay_at"] = health.decay_at.isoformat()
        payload["days_left"] = round(
            (health.decay_at - datetime.now(UTC)).total_seconds() / 86400, 1
        )
    else:
        payload["missing_sources"] = list(health.missing)
        if health.supports == 0:
            payload["reason"] = "the claim has no supports"
    return NewFinding(kind=kind, claim_ids=[health.claim_id], payload=payload)
