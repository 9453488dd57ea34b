"""prepare / reshape of the researcher."""

from __future__ import annotations

import json
import uuid

import pytest

from research_llm import ClaimDraft, DraftOutcome, EvidenceDoc, SupportDraft
from research_platform.errors import PrepareError
from research_researcher import prepare, reshape

pytestmark = pytest.mark.unit


def test_prepare_normalises_question_and_derives_entity() -> None:
    task = prepare.prepare_task(json.dumps({"question": "  Does   Vitamin D reduce fractures?  ", "tier": "batched"}).encode())
    assert task.question == "Does Vitamin D reduce fractures?"
    assert task.entity == "does vitamin d reduce fractures"
    assert task.tier.value == "batched"


def test_prepare_keeps_a_given_entity_normalised() -> None:
    task = prepare.prepare_task(json.dumps({"question": "Is aspirin protective?", "entity": "Aspirin!"}).encode())
    assert task.entity == "aspirin"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "invalid research task"),
        (json.dumps({"entity": "x"}).encode(), "question"),
        (json.dumps({"question": "ok?", "tier": "urgent"}).encode(), "tier"),
        (json.dumps({"question": "valid question", "unexpected": 1}).encode(), "unexpected"),
    ],
)
def test_prepare_rejects_bad_input_with_the_reason(body: bytes, reason: str) -> None:
    with pytest.raises(PrepareError, match=reason):
        prepare.prepare_task(body)


def _outcome(*supports: SupportDraft) -> DraftOutcome:
    draft = ClaimDraft(statement="Vitamin D lowers fracture risk.", entity="vitamin d", confidence=0.8, supports=list(supports))
    return DraftOutcome(draft=draft, provider="offline", model="offline-extractive-v1", failures=[])


EVIDENCE = [
    EvidenceDoc(source_id="corpus:1", title="Trial A", text="Vitamin D supplementation lowered fracture risk by 20%. Other text."),
    EvidenceDoc(source_id="corpus:2", title="Trial B", text="No effect on falls was observed."),
]


def test_reshape_keeps_only_verifiable_quotes_and_counts_the_rest() -> None:
    outcome = _outcome(
        SupportDraft(source_id="corpus:1", quote="Vitamin D supplementation lowered fracture risk by 20%."),
        SupportDraft(source_id="corpus:2", quote="Fractures were halved."),  # not in the source
        SupportDraft(source_id="corpus:9", quote="No effect on falls was observed."),  # unknown source
    )
    task = prepare.prepare_task(json.dumps({"question": "Does vitamin D reduce fractures?"}).encode())
    claim = reshape.to_claim(task, outcome, EVIDENCE)
    assert [s.source_id for s in claim.supports] == ["corpus:1"]
    assert claim.supports[0].title == "Trial A"
    assert claim.dropped_supports == 2
    assert claim.claim_id == uuid.uuid5(task.task_id, "claim")  # a redelivery maps to the same claim
    assert claim.model == "offline:offline-extractive-v1"


def test_reshape_without_any_verified_support_has_zero_confidence() -> None:
    task = prepare.prepare_task(json.dumps({"question": "Does vitamin D reduce fractures?"}).encode())
    claim = reshape.to_claim(task, _outcome(SupportDraft(source_id="corpus:2", quote="invented")), EVIDENCE)
    assert claim.supports == [] and claim.confidence == 0.0
