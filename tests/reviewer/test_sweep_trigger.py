"""Which `research.claim.decided` events make the reviewer sweep for stale reports."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from research_contracts import ClaimDecided, ClaimStatus
from research_reviewer.sweep import may_undermine

pytestmark = pytest.mark.unit


def _event(status: ClaimStatus, supersedes: list[uuid.UUID] | None = None) -> ClaimDecided:
    return ClaimDecided(
        claim_id=uuid.uuid4(),
        status=status,
        supersedes=supersedes or [],
        decided_at=datetime.now(UTC),
    )


def test_a_plain_promotion_does_not_sweep_and_everything_else_does() -> None:
    assert not may_undermine(_event(ClaimStatus.active))
    assert may_undermine(_event(ClaimStatus.active, [uuid.uuid4()]))  # its targets left `active`
    for status in (
        ClaimStatus.rejected,
        ClaimStatus.superseded,
        ClaimStatus.critic_quarantine,
        ClaimStatus.pending,
    ):
        assert may_undermine(_event(status))
