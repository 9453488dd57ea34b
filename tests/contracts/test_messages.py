"""The bus messages: a task's free text crosses the privacy boundary when it is parsed (scientific
text untouched, a patient's identifiers replaced, `patient_ref` never kept), commands refuse fields
they do not know, bounds are enforced, and a message survives its JSON wire form."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from research_contracts import (
    ClaimDecided,
    ClaimProposed,
    ClaimStatus,
    CriticVerdict,
    RerunResearch,
    RunResearch,
    SearchEvidence,
    SourcesRetracted,
    TaskFilters,
    Tier,
    Verdict,
)

pytestmark = pytest.mark.unit

SCIENCE = "Does vitamin D supplementation reduce fracture risk in adults over 65?"


def test_a_task_keeps_scientific_text_as_written() -> None:
    task = RunResearch(question=SCIENCE, entity="vitamin D", patient_context="on warfarin")
    assert (task.question, task.entity, task.patient_context) == (
        SCIENCE,
        "vitamin D",
        "on warfarin",
    )
    assert task.tier is Tier.priority and task.origin == "api"


def test_identifiers_in_a_task_are_replaced_by_placeholders() -> None:
    task = RunResearch(
        question="Does metformin help Jane Roe, MRN 12345678, with her diabetes?",
        patient_context="Jane Roe is 54, DOB 03/04/1970",
    )
    assert task.question == "Does metformin help [NAME_1], MRN [MRN_1], with her diabetes?"
    assert task.patient_context == "[NAME_1] is 54, DOB [DATE_1]"
    wire = task.model_dump_json()
    assert "Jane" not in wire and "12345678" not in wire and "1970" not in wire


def test_one_person_keeps_one_placeholder_across_a_tasks_fields() -> None:
    task = RunResearch(
        question="Does metformin help Jane Roe with her diabetes?",
        patient_context="John Smith, husband of Jane Roe, reports her HbA1c",
        entity="metformin for Jane Roe",
    )
    assert task.question == "Does metformin help [NAME_1] with her diabetes?"
    assert task.patient_context == "[NAME_2], husband of [NAME_1], reports her HbA1c"
    assert task.entity == "metformin for [NAME_1]"


def test_a_patient_ref_becomes_de_identified_context_and_is_never_kept() -> None:
    task = RunResearch.model_validate(
        {"question": "Does aspirin prevent stroke?", "patient_ref": "John Smith MRN 99887766"}
    )
    assert task.patient_context == "[NAME_1] MRN [MRN_1]"
    assert "patient_ref" not in task.model_dump()


def test_a_patient_ref_never_overwrites_the_context_sent_with_it() -> None:
    task = RunResearch.model_validate(
        {
            "question": "Does aspirin prevent stroke?",
            "patient_context": "on warfarin",
            "patient_ref": "x",
        }
    )
    assert task.patient_context == "on warfarin"


def test_a_task_parsed_again_from_its_json_is_the_same_task() -> None:
    # the gateway parses a command and its consumer parses it again: de-identifying twice is a no-op
    task = RunResearch(
        question="Does metformin help Jane Roe with her diabetes?",
        tier=Tier.emergency,
        filters=TaskFilters(year_from=2015, sources=["pubmed"]),
    )
    assert RunResearch.model_validate_json(task.model_dump_json()) == task


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"question": "ab"}, ("question",)),
        ({"question": "x" * 2001}, ("question",)),
        ({"question": SCIENCE, "tier": "urgent"}, ("tier",)),
        ({"question": SCIENCE, "entity": "e" * 201}, ("entity",)),
        ({"question": SCIENCE, "surprise": 1}, ("surprise",)),
        ({"question": SCIENCE, "filters": {"year_since": 2010}}, ("filters", "year_since")),
        ({}, ("question",)),
    ],
)
def test_a_task_refuses_bad_input_naming_the_field(fields: dict[str, Any], where: tuple) -> None:
    with pytest.raises(ValidationError) as refused:
        RunResearch.model_validate(fields)
    assert [error["loc"] for error in refused.value.errors()] == [where]


def test_a_search_of_outside_sources_sends_only_scientific_terms() -> None:
    query = "metformin Jane Roe type 2 diabetes"
    assert SearchEvidence(query=query, sources=["corpus", "pubmed"]).query == (
        "metformin type 2 diabetes"
    )
    # the local corpus alone gets the query as it was given
    assert SearchEvidence(query=query, sources=["corpus"]).query == query


@pytest.mark.parametrize(
    "fields",
    [
        {"query": ""},
        {"query": "q", "limit": 0},
        {"query": "q", "limit": 201},
        {"query": "q", "deadline_s": 0},
        {"query": "q", "deadline_s": 121},
        {"query": "q", "mode": "fuzzy"},
        {"query": "q", "query_embedding": [0.0] * 383},
    ],
)
def test_a_search_outside_its_bounds_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchEvidence.model_validate(fields)


def test_a_search_carries_a_full_query_vector() -> None:
    vector = [0.5] * 384
    assert SearchEvidence(query="q", query_embedding=vector).query_embedding == vector


@pytest.mark.parametrize("score", [-0.01, 1.01])
def test_a_critic_score_lies_between_0_and_1(score: float) -> None:
    with pytest.raises(ValidationError):
        CriticVerdict(verdict=Verdict.promote, score=score, reasoning="r")


def test_a_claim_announced_again_has_the_same_message_id() -> None:
    claim_id = uuid.uuid4()
    first = ClaimProposed(claim_id=claim_id, entity="vitamin D", statement="It helps.")
    again = ClaimProposed(claim_id=claim_id, entity="vitamin D", statement="It helps a little.")
    other = ClaimProposed(claim_id=uuid.uuid4(), entity="vitamin D", statement="It helps.")
    assert first.msg_id() == again.msg_id() == f"claim-proposed-{claim_id}"
    assert other.msg_id() != first.msg_id()


def test_a_retraction_names_at_least_one_source_and_has_its_own_message_id() -> None:
    with pytest.raises(ValidationError):
        SourcesRetracted(source_ids=[])
    one, two = (
        SourcesRetracted(source_ids=["doi:10.1/x"]),
        SourcesRetracted(source_ids=["doi:10.1/x"]),
    )
    assert one.msg_id() == f"sources-retracted-{one.event_id}" != two.msg_id()


def test_a_rerun_request_refuses_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        RerunResearch(claim_id=uuid.uuid4(), question=SCIENCE, tier="emergency")  # type: ignore[call-arg]


def test_a_claim_decision_survives_its_wire_form() -> None:
    decided = ClaimDecided(
        claim_id=uuid.uuid4(),
        status=ClaimStatus.superseded,
        verdict=Verdict.supersede,
        score=0.8,
        supersedes=[uuid.uuid4()],
        decided_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    assert ClaimDecided.model_validate_json(decided.model_dump_json()) == decided
