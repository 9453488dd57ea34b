"""The run-event contract: the seed's eleven types, one subject token per run, JSON round-trip."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from research_contracts.runs import (
    RUN_EVENT_ADAPTER,
    AgentStarted,
    RunDone,
    RunEventType,
    ToolCalled,
    new_run_id,
    parse_run_event,
    run_event_msg_id,
    run_event_subject,
    valid_run_id,
)

pytestmark = pytest.mark.unit


def test_the_seed_event_types_are_all_there() -> None:
    assert [t.value for t in RunEventType] == [
        "agent_start",
        "reasoning",
        "tool_call",
        "tool_result",
        "tool_progress",
        "message_chunk",
        "agent_end",
        "verdict",
        "result",
        "error",
        "done",
    ]
    schema = RUN_EVENT_ADAPTER.json_schema()
    assert set(schema["discriminator"]["mapping"]) == {t.value for t in RunEventType}


def test_subject_and_message_id() -> None:
    assert run_event_subject("rv-3f2a") == "research.run.rv-3f2a.event"
    assert run_event_msg_id("rv-3f2a", 7) == "rv-3f2a-7"


@pytest.mark.parametrize("bad", ["", "a.b", "a*", ">", "a b", "x" * 129])
def test_run_ids_that_would_change_the_subject_are_refused(bad: str) -> None:
    assert not valid_run_id(bad)
    with pytest.raises(ValueError, match="is not a single subject token"):
        run_event_subject(bad)
    with pytest.raises(ValidationError):
        AgentStarted(run_id=bad)


def test_events_round_trip_through_json_by_type() -> None:
    event = ToolCalled(
        run_id="r1",
        agent="researcher",
        iteration=2,
        tool_call_id="tc-1",
        tool_id="research.search_papers",
        params={"query": "vitamin D"},
    )
    back = parse_run_event(event.model_dump_json())
    assert isinstance(back, ToolCalled) and back == event


def test_unknown_type_and_extra_fields_are_rejected() -> None:
    with pytest.raises(ValidationError):
        parse_run_event(b'{"type": "thinking", "run_id": "r1"}')
    with pytest.raises(ValidationError):
        parse_run_event(b'{"type": "done", "run_id": "r1", "surprise": 1}')


def test_a_reports_events_are_numbered_under_its_id() -> None:
    report_id = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert run_event_msg_id("rv-3f2a", 7, report_id) == f"{report_id}-rv-3f2a-7"
    assert run_event_msg_id("rv-3f2a", 7, report_id) != run_event_msg_id("rv-3f2a", 7)


def test_new_run_ids_are_random_single_subject_tokens() -> None:
    first, second = new_run_id("vf"), new_run_id("vf")
    assert first != second
    assert first.startswith("vf-") and len(first) == len("vf-") + 32
    assert valid_run_id(first)
    assert run_event_subject(first) == f"research.run.{first}.event"


def test_every_event_defaults_to_the_orchestrators_first_round_and_a_completed_run() -> None:
    done = parse_run_event(b'{"type": "done", "run_id": "r1"}')
    assert isinstance(done, RunDone)
    assert (done.agent, done.iteration, done.seq, done.status) == (
        "orchestrator",
        1,
        0,
        "completed",
    )
    with pytest.raises(ValidationError):
        parse_run_event(b'{"type": "done", "run_id": "r1", "status": "vanished"}')
