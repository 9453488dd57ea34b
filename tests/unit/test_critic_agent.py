"""prepare / reshape of the critic; reshape is where the supersede rule lives."""

from __future__ import annotations

import json
import uuid

import pytest

from research_contracts import CriticVerdict, Verdict
from research_critic import prepare, reshape
from research_llm import JudgeOutcome
from research_platform.errors import PrepareError

pytestmark = pytest.mark.unit


def test_prepare_pending_parses_the_event() -> None:
    claim_id = uuid.uuid4()
    event = prepare.prepare_pending(json.dumps({"claim_id": str(claim_id), "entity": "x", "statement": "y"}).encode())
    assert event.claim_id == claim_id


@pytest.mark.parametrize("body", [b"[]", b"{}", b'{"claim_id": "not-a-uuid", "entity": "x", "statement": "y"}', b"\xff"])
def test_prepare_pending_rejects_garbage(body: bytes) -> None:
    with pytest.raises(PrepareError):
        prepare.prepare_pending(body)


def _judged(verdict: Verdict, score: float, supersedes: list[uuid.UUID]) -> JudgeOutcome:
    return JudgeOutcome(
        verdict=CriticVerdict(verdict=verdict, score=score, reasoning="because", supersedes=supersedes),
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
