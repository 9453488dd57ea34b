"""The subject names: each builder lands inside the stream that holds its messages, commands are
told from events, a dead letter names where it came from, and every agent and tool has its own
request subject."""

from __future__ import annotations

import pytest

from research_contracts import Tier, subjects
from research_contracts.corpus_tools import CORPUS_TOOLS, TOOL_REQUESTS
from research_contracts.reviews import EVIDENCE_SOURCES
from research_contracts.runs import run_event_subject

pytestmark = pytest.mark.unit


def _matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: `*` is one token, a trailing `>` one or more."""
    wanted, tokens = pattern.split("."), subject.split(".")
    for at, token in enumerate(wanted):
        if token == ">":
            return len(tokens) > at
        if at >= len(tokens) or token not in ("*", tokens[at]):
            return False
    return len(wanted) == len(tokens)


def _in_stream(subject: str, stream_subjects: tuple[str, ...]) -> bool:
    return any(_matches(pattern, subject) for pattern in stream_subjects)


def test_each_tier_publishes_on_its_own_subject_of_the_task_stream() -> None:
    built = {tier: subjects.task_subject(tier) for tier in Tier}
    assert built == {tier: f"research.task.{tier.value}" for tier in Tier}
    assert all(_in_stream(subject, subjects.TASK_SUBJECTS) for subject in built.values())
    assert set(subjects.RESEARCHER_DURABLES) == {tier.value for tier in Tier}


def test_every_named_subject_lies_in_the_stream_that_keeps_it() -> None:
    streams = {
        subjects.CLAIM_SUBJECTS: (
            subjects.CLAIM_PENDING,
            subjects.CLAIM_RECRITIQUE,
            subjects.CLAIM_DECIDED,
            subjects.SOURCE_RETRACTED,
        ),
        subjects.SOURCELIST_SUBJECTS: (subjects.SOURCELIST_REQUESTED, subjects.SOURCELIST_UPDATED),
        subjects.REVIEW_SUBJECTS: (subjects.REVIEW_REQUESTED, subjects.REVIEW_COMPLETED),
        subjects.VERIFY_SUBJECTS: (subjects.VERIFY_REQUESTED, subjects.VERIFICATION_CHANGED),
    }
    for stream_subjects, named in streams.items():
        for subject in named:
            assert _in_stream(subject, stream_subjects), (subject, stream_subjects)


@pytest.mark.parametrize(
    "subject",
    [
        subjects.task_subject("emergency"),
        subjects.task_subject("batched"),
        subjects.REVIEW_REQUESTED,
        subjects.VERIFY_REQUESTED,
        subjects.SOURCELIST_REQUESTED,
    ],
)
def test_a_persons_request_is_a_command(subject: str) -> None:
    assert subjects.is_command(subject)


@pytest.mark.parametrize(
    "subject",
    [
        subjects.CLAIM_PENDING,
        subjects.CLAIM_DECIDED,
        subjects.SOURCE_RETRACTED,
        subjects.REVIEW_COMPLETED,
        subjects.VERIFICATION_CHANGED,
        subjects.SOURCELIST_UPDATED,
        subjects.ingest_job_subject("run1"),
        run_event_subject("rv-1"),
    ],
)
def test_events_and_jobs_are_not_commands(subject: str) -> None:
    assert not subjects.is_command(subject)


def test_a_dead_letter_subject_names_the_original_subject() -> None:
    original = subjects.task_subject("priority")
    parked = subjects.dead_letter_subject(original)
    assert parked == "research.deadletter.research.task.priority"
    assert parked.removeprefix(f"{subjects.DEAD_LETTER_PREFIX}.") == original
    assert _in_stream(parked, subjects.DEAD_LETTER_SUBJECTS)
    assert not _in_stream(parked, subjects.TASK_SUBJECTS)
    # the parked copy is kept for an operator: it is not deleted as a settled command
    assert not subjects.is_command(parked)


def test_every_periodic_agent_has_one_subject_per_control_verb() -> None:
    built = [
        subjects.control_subject(agent, verb)
        for agent in subjects.PERIODIC_AGENTS
        for verb in subjects.CONTROL_VERBS
    ]
    assert len(set(built)) == len(subjects.PERIODIC_AGENTS) * len(subjects.CONTROL_VERBS)
    assert subjects.control_subject("replicator", "run-once") == (
        "research.control.replicator.run-once"
    )
    assert subjects.control_subject("critic", "drain") == subjects.CRITIC_DRAIN


def test_every_corpus_tool_has_a_request_model_and_its_own_subject() -> None:
    assert tuple(TOOL_REQUESTS) == CORPUS_TOOLS
    built = {subjects.corpus_tool_subject(tool) for tool in CORPUS_TOOLS}
    assert len(built) == len(CORPUS_TOOLS)
    assert all(_matches("research.connector.corpus.*", subject) for subject in built)
    assert subjects.corpus_tool_subject("get_paper") == "research.connector.corpus.get_paper"


def test_every_evidence_source_has_its_own_connector_subject() -> None:
    built = {subjects.connector_source_subject(source) for source in EVIDENCE_SOURCES}
    assert len(built) == len(EVIDENCE_SOURCES)
    assert all(_matches("research.connector.source.*", subject) for subject in built)
    assert subjects.CONNECTOR_SEARCH not in built


def test_ingest_jobs_are_queued_in_the_stream_and_progress_is_not() -> None:
    assert _in_stream(subjects.ingest_job_subject("run-7"), subjects.INGEST_SUBJECTS)
    done = subjects.ingest_done_subject("run-7")
    assert done.endswith(".run-7")
    assert not _in_stream(done, subjects.INGEST_SUBJECTS)
