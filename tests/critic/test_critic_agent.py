"""prepare / reshape of the critic; reshape is where the supersede rule lives."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from research_contracts import CriticVerdict, Verdict
from research_critic import prepare, reshape
from research_ledger.tables import MemoryClaim
from research_llm import JudgeOutcome
from research_platform.errors import PrepareError

pytestmark = pytest.mark.unit


def _stored(supports: list) -> MemoryClaim:
    return MemoryClaim(
        id=uuid.uuid4(),
        entity="statins",
        question="q",
        statement="Statins lower LDL.",
        confidence=0.7,
        supports=supports,
        created_at=datetime.now(UTC),
    )


def test_prepare_refuses_an_unknown_claim_and_malformed_supports() -> None:
    with pytest.raises(PrepareError, match="unknown claim"):
        prepare.known(uuid.uuid4(), None)
    with pytest.raises(PrepareError, match="malformed supports"):
        prepare.review(_stored([{"quote": "no source id"}]), [])


def test_prepare_reviews_against_the_active_claims_and_drops_discredited_sources() -> None:
    claim = _stored(
        [
            {"source_id": "pmid:1", "quote": "LDL fell."},
            {"source_id": "pmid:2", "quote": "LDL fell a lot."},
        ]
    )
    other = _stored([{"source_id": "pmid:3", "quote": "LDL fell."}])
    review = prepare.review(claim, [other])
    assert review.considered == {other.id} and prepare.cited_sources(claim) == ["pmid:1", "pmid:2"]
    narrowed = prepare.without(review, {"pmid:2"})
    assert [s.source_id for s in narrowed.candidate.supports] == [
        "pmid:1"
    ] and narrowed.active == review.active


def _judged(verdict: Verdict, score: float, supersedes: list[uuid.UUID]) -> JudgeOutcome:
    return JudgeOutcome(
        verdict=CriticVerdict(
            verdict=verdict, score=score, reasoning="because", supersedes=supersedes
        ),
        provider="offline",
        model="offline-critic-v1",
        failures=[],
    )


def test_supersede_keeps_only_active_claims_of_the_entity() -> None:
    active, stranger = uuid.uuid4(), uuid.uuid4()
    verdict = reshape.conform(_judged(Verdict.supersede, 0.9, [active, stranger]), {active})
    assert verdict.verdict is Verdict.supersede and verdict.supersedes == [active]
    assert verdict.model == "offline:offline-critic-v1"


@pytest.mark.parametrize("score", [0.9, 0.2])
def test_supersede_without_a_considered_target_is_promoted_whatever_its_score(score: float) -> None:
    verdict = reshape.conform(_judged(Verdict.supersede, score, [uuid.uuid4()]), set())
    assert verdict.verdict is Verdict.promote and verdict.supersedes == []
    assert verdict.score == score and "promoted instead" in verdict.reasoning


def test_promote_never_carries_supersede_targets() -> None:
    active = uuid.uuid4()
    verdict = reshape.conform(_judged(Verdict.promote, 0.7, [active]), {active})
    assert verdict.supersedes == []
