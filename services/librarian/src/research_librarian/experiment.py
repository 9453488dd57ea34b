"""The librarian's judgement (pure logic, no LLM, ever): which findings to open and which to resolve.

Precedence: a claim with a support that does not resolve to a known source (or with no
supports at all) is `broken_provenance`, whatever its decay; otherwise `decay_at` inside the
window makes it `approaching_decay`; otherwise it is healthy. An open finding whose kind no
longer matches the claim's state is resolved.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from research_librarian.prepare import ClaimHealth, OpenFinding

BROKEN_PROVENANCE = "broken_provenance"
APPROACHING_DECAY = "approaching_decay"


def diagnose(health: ClaimHealth) -> str | None:
    """The one problem the claim has now, by precedence, or None when it is healthy."""
    if health.supports == 0 or health.missing:
        return BROKEN_PROVENANCE
    if health.decaying:
        return APPROACHING_DECAY
    return None


@dataclass(frozen=True)
class Resolution:
    finding: OpenFinding
    claim_id: uuid.UUID
    now: str | None  # the claim's current problem (None = healthy)


@dataclass
class Triage:
    """The changes one batch needs."""

    opened: list[tuple[ClaimHealth, str]] = field(default_factory=list)
    resolved: list[Resolution] = field(default_factory=list)
    unchanged: int = 0
    healthy: int = 0


def triage(batch: list[ClaimHealth]) -> Triage:
    """Compare each claim's problem with its open findings."""
    result = Triage()
    for health in batch:
        problem = diagnose(health)
        if problem is None:
            result.healthy += 1
        stale = [f for f in health.open if f.kind != problem]
        result.resolved.extend(Resolution(f, health.claim_id, problem) for f in stale)
        if problem is not None and not any(f.kind == problem for f in health.open):
            result.opened.append((health, problem))
        elif not stale:
            result.unchanged += 1
    return result
