"""A watched claim is verified again with the sources and filters it was first verified with; a
stored request that no longer validates falls back to the corpus alone (the claim stays on the
schedule)."""

from __future__ import annotations

import uuid

import pytest

from research_ledger.tables import WatchedClaimRow
from research_replicator.watched import reverification

pytestmark = pytest.mark.unit

CLAIM = WatchedClaimRow(verification_id=uuid.uuid4(), claim="Vitamin D prevents hip fractures.")


def test_the_first_requests_sources_and_filters_are_kept() -> None:
    stored = {"sources": ["corpus", "pubmed"], "filters": {"year_from": 2010}, "claim": "other"}
    command = reverification(CLAIM, stored, "run-7")
    assert command.sources == ["corpus", "pubmed"]
    assert command.filters.year_from == 2010
    assert (command.verification_id, command.run_id, command.claim) == (
        CLAIM.verification_id,
        "run-7",
        CLAIM.claim,
    )
    assert command.watch and command.origin == "watch"


def test_a_stored_request_that_no_longer_validates_falls_back_to_the_corpus() -> None:
    command = reverification(CLAIM, {"sources": "not a list", "filters": 3}, "run-8")
    assert command.sources == ["corpus"]
    assert (command.claim, command.run_id, command.watch, command.origin) == (
        CLAIM.claim,
        "run-8",
        True,
        "watch",
    )
