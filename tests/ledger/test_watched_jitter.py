"""The replicator spreads watched claims over their interval: a deterministic phase per claim id."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from research_ledger.watched import jitter, phase

pytestmark = pytest.mark.unit


def test_a_claims_phase_is_fixed_by_its_id() -> None:
    claim = uuid.UUID("0b9a4c1e-5f7d-4e43-9a7e-2d6f0c1b8a55")
    assert phase(claim) == phase(uuid.UUID(str(claim)))  # the same id, the same place, every run
    assert 0.0 <= phase(claim) < 1.0
    assert phase(claim) != phase(uuid.UUID("0b9a4c1e-5f7d-4e43-9a7e-2d6f0c1b8a56"))


def test_ten_thousand_claims_due_together_are_spread_over_the_interval() -> None:
    """10,000 claims entered at once (one `next_due_at`) are asked for over the last half of a
    30-day interval: about as many each day, none twice as many as the average, none before."""
    claims = [uuid.UUID(int=n * 7919 + 12345) for n in range(10_000)]  # deterministic ids
    early = [jitter(c, 30.0, 0.5) for c in claims]
    assert all(timedelta(0) <= e < timedelta(days=15) for e in early)
    per_day = [0] * 15
    for e in early:
        per_day[int(e / timedelta(days=1))] += 1
    assert max(per_day) < 2 * 10_000 / 15 and min(per_day) > 0.5 * 10_000 / 15
    assert jitter(claims[0], 30.0, 0.0) == timedelta(0)  # no spread: the due time as stored
