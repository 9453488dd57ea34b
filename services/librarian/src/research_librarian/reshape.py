"""Shape the librarian's decisions as findings (their payload is also the audit payload)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from research_agents import NewFinding
from research_librarian.experiment import APPROACHING_DECAY
from research_librarian.prepare import ClaimHealth


def finding(health: ClaimHealth, kind: str) -> NewFinding:
    """The finding recorded for `health`: missing source ids or the decay date, as evidence."""
    payload: dict[str, Any] = {"supports": health.supports}
    if kind == APPROACHING_DECAY and health.decay_at is not None:
        payload["decay_at"] = health.decay_at.isoformat()
        payload["days_left"] = round((health.decay_at - datetime.now(UTC)).total_seconds() / 86400, 1)
    else:
        payload["missing_sources"] = list(health.missing)
        if health.supports == 0:
            payload["reason"] = "the claim has no supports"
    return NewFinding(kind=kind, claim_ids=[health.claim_id], payload=payload)
