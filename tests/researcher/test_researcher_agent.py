"""prepare / reshape of the researcher, on the path production takes: FastStream validates the
body into a `RunResearch`, `pipeline.handle` normalises it. A body that is not a valid task never
reaches prepare; its dead-lettering is tested on a real nats-server (tests/researcher/test_delivery.py)."""

from __future__ import annotations

import pytest

from research_contracts import RunResearch
from research_llm import ClaimDraft, DraftOutcome, EvidenceDoc, SupportDraft
from research_platform.errors import PrepareError
from research_researcher import prepare, reshape

pytestmark = pytest.mark.unit


def test_prepare_normalises_question_and_derives_entity() -> None:
    task = prepare.normalise_task(
        RunResearch(question="  Does   Vitamin D reduce fractures?  ", tier="batched")
    )
    assert task.question == "Does Vitamin D reduce fractures?"
    assert task.entity == "does vitamin d reduce fractures"
    assert task.tier.value == "batched"


def test_prepare_keeps_a_given_entity_normalised() -> None:
    task = prepare.normalise_task(RunResearch(question="Is aspirin protective?", entity="Aspirin!"))
    assert task.entity == "aspirin"


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("   ?!   ", "question is empty after normalisation"),
        ("Does zinc\x00 help?", "NUL byte"),
    ],
)
def test_a_valid_message_that_cannot_become_a_task_is_refused_with_the_reason(
    question: str, reason: str
) -> None:
    with pytest.raises(PrepareError, match=reason):
        prepare.normalise_task(RunResearch(question=question))


def _outcome(*supports: SupportDraft) -> DraftOutcome:
    draft = ClaimDraft(
        statement="Vitamin D lowers fracture risk.",
        entity="vitamin d",
        confidence=0.8,
        supports=list(supports),
    )
    return DraftOutcome(draft=draft, provider="offline", model="offline-extractive-v1", failures=[])


EVIDENCE = [
    EvidenceDoc(
        source_id="corpus:1",
        title="Trial A",
        text="Vitamin D supplementation lowered fracture risk by 20%. Other text.",
    ),
    EvidenceDoc(source_id="corpus:2", title="Trial B", text="No effect on falls was observed."),
]


def test_reshape_keeps_only_verifiable_quotes_and_counts_the_rest() -> None:
    outcome = _outcome(
        SupportDraft(
            source_id="corpus:1", quote="Vitamin D supplementation lowered fracture risk by 20%."
        ),
        SupportDraft(source_id="corpus:2", quote="Fractures were halved."),  # not in the source
        SupportDraft(
            source_id="corpus:9", quote="No effect on falls was observed."
        ),  # unknown source
    )
    task = prepare.normalise_task(RunResearch(question="Does vitamin D reduce fractures?"))
    claim = reshape.to_claim(task, outcome, EVIDENCE)
    assert [s.source_id for s in claim.supports] == ["corpus:1"]
    assert claim.supports[0].title == "Trial A"
    assert claim.dropped_supports == 2
    assert claim.model == "offline:offline-extractive-v1"


def test_a_redelivered_task_names_the_same_claim_and_another_task_another() -> None:
    """A task delivered again (after a crash, a lost ack) drafts again — maybe differently — but
    proposes the claim it proposed the first time, so the ledger keeps one claim per task."""
    task = prepare.normalise_task(RunResearch(question="Does vitamin D reduce fractures?"))
    first = reshape.to_claim(
        task,
        _outcome(
            SupportDraft(
                source_id="corpus:1",
                quote="Vitamin D supplementation lowered fracture risk by 20%.",
            )
        ),
        EVIDENCE,
    )
    redelivered = prepare.normalise_task(RunResearch.model_validate_json(task.model_dump_json()))
    again = reshape.to_claim(
        redelivered,
        _outcome(SupportDraft(source_id="corpus:2", quote="No effect on falls was observed.")),
        EVIDENCE,
    )
    other = reshape.to_claim(
        prepare.normalise_task(RunResearch(question="Does vitamin D reduce fractures?")),
        _outcome(),
        EVIDENCE,
    )
    assert again.claim_id == first.claim_id
    assert (
        other.claim_id != first.claim_id
    )  # the same question asked again is a new task and a new claim


def test_reshape_without_any_verified_support_has_zero_confidence() -> None:
    task = prepare.normalise_task(RunResearch(question="Does vitamin D reduce fractures?"))
    claim = reshape.to_claim(
        task, _outcome(SupportDraft(source_id="corpus:2", quote="invented")), EVIDENCE
    )
    assert claim.supports == [] and claim.confidence == 0.0
