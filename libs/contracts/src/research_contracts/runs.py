"""Run events: the live trace of a long job (a literature review, a claim verification, a
source list), one JetStream message per event on `research.run.<run_id>.event`.

The event types are seed 000's SSE vocabulary, each carrying `{run_id, agent, iteration}`:

    agent_start · reasoning · tool_call · tool_result · tool_progress · message_chunk
    agent_end · verdict · result · error · done

Run ids are the server's: `new_run_id` draws each from 128 random bits, so no client can name
(or guess) another's run. `seq` is the recorder's own 1-based order within a run (it also makes
the `Nats-Msg-Id` `<report_id>-<run_id>-<seq>`, so a re-published event is dropped by JetStream
de-duplication, and two reports can never drop each other's events); the
*stream* sequence is what a reader resumes from (it is the SSE event id). `done` is always
the last event of a run: readers stop there.

Kept apart from `subjects.py` / `messages.py` so the modes can land independently; the names
here are the ones to import.
"""

from __future__ import annotations

import re
import secrets
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

# --- subjects and stream name --------------------------------------------------------------
RUNS_STREAM: Final = "RESEARCH_RUNS"
RUN_EVENT_SUBJECTS: Final = ("research.run.*.event",)
# A run id is one NATS subject token: no dots, wildcards or whitespace.
RUN_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{1,128}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def valid_run_id(run_id: str) -> bool:
    """Whether `run_id` can stand as the single subject token of a run."""
    return bool(_RUN_ID.match(run_id))


def run_event_subject(run_id: str) -> str:
    """The subject every event of `run_id` is published on; rejects ids that would change the
    subject's shape (a dot or wildcard would let one run read another's events)."""
    if not valid_run_id(run_id):
        raise ValueError(
            f"run id {run_id!r} is not a single subject token ([A-Za-z0-9_-], ≤ 128 chars)"
        )
    return f"research.run.{run_id}.event"


def new_run_id(prefix: str) -> str:
    """A fresh run id, `<prefix>-` and 32 hex digits drawn at random (`rv` review, `vf`
    verification, `sl` source list): nothing a client sends goes into it."""
    return f"{prefix}-{secrets.token_hex(16)}"


def run_event_msg_id(run_id: str, seq: int, report_id: uuid.UUID | str | None = None) -> str:
    """The `Nats-Msg-Id` of the `seq`-th event of a run, led by its report's id when the run has
    one (JetStream drops a repeat of it, and only of it)."""
    return f"{report_id}-{run_id}-{seq}" if report_id else f"{run_id}-{seq}"


# --- events --------------------------------------------------------------------------------
class RunEventType(StrEnum):
    """The seed-000 event types, in the order a run typically emits them."""

    agent_start = "agent_start"
    reasoning = "reasoning"
    tool_call = "tool_call"
    tool_result = "tool_result"
    tool_progress = "tool_progress"
    message_chunk = "message_chunk"
    agent_end = "agent_end"
    verdict = "verdict"
    result = "result"
    error = "error"
    done = "done"


class _RunEvent(BaseModel):
    """Fields every run event carries."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(
        pattern=RUN_ID_PATTERN, description="The run this event belongs to.", examples=["rv-3f2a9c"]
    )
    agent: str = Field(
        default="orchestrator",
        max_length=100,
        description="Which agent emitted it (researcher, peer_reviewer, verifier, scout, orchestrator).",
        examples=["researcher"],
    )
    iteration: int = Field(
        default=1, ge=0, description="Author/reviewer round (1-based; 0 = outside any round)."
    )
    seq: int = Field(
        default=0, ge=0, description="Recorder order within the run (1-based once published)."
    )
    at: datetime = Field(
        default_factory=lambda: datetime.now(UTC), description="When the event was emitted."
    )


class AgentStarted(_RunEvent):
    """An agent call began."""

    type: Literal["agent_start"] = "agent_start"
    agent_id: str | None = Field(
        default=None, description="Configured id of the agent.", examples=["peer_review_agent"]
    )


class ReasoningShared(_RunEvent):
    """One visible thinking step of an agent (plan, decision, rationale)."""

    type: Literal["reasoning"] = "reasoning"
    text: str = Field(
        description="The step, in plain language.", examples=["Step 1: plan 4 sub-questions"]
    )


class ToolCalled(_RunEvent):
    """An agent called a tool (a corpus search, a metadata lookup, …)."""

    type: Literal["tool_call"] = "tool_call"
    tool_call_id: str = Field(
        description="Pairs this call with its progress and result.", examples=["tc-3"]
    )
    tool_id: str = Field(description="Which tool.", examples=["research.search_papers"])
    params: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")


class ToolReturned(_RunEvent):
    """A tool call finished (with results, or with an error message)."""

    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    tool_id: str
    results: Any = Field(default=None, description="JSON results (trimmed when very large).")
    error: str | None = Field(default=None, description="Why the call failed, when it did.")
    truncated: bool = Field(
        default=False, description="True when `results` was trimmed to fit one message."
    )


class ToolProgressed(_RunEvent):
    """A long tool call reports progress."""

    type: Literal["tool_progress"] = "tool_progress"
    tool_call_id: str
    message: str


class MessageChunkStreamed(_RunEvent):
    """A piece of the agent's final output, streamed as it is produced."""

    type: Literal["message_chunk"] = "message_chunk"
    text: str


class AgentEnded(_RunEvent):
    """An agent call completed (successfully or not)."""

    type: Literal["agent_end"] = "agent_end"
    ok: bool = Field(default=True, description="False when the agent call raised.")


class VerdictReached(_RunEvent):
    """A judgement: the peer reviewer's PASS / REVISION_NEEDED, or a verification verdict."""

    type: Literal["verdict"] = "verdict"
    verdict: str = Field(examples=["REVISION_NEEDED", "STRONGLY SUPPORTED"])
    confidence: str | None = Field(default=None, examples=["HIGH"])
    details: dict[str, Any] = Field(
        default_factory=dict, description="Issues, counts, anything structured."
    )


class ResultReady(_RunEvent):
    """The run's final product (report, review, per-iteration info)."""

    type: Literal["result"] = "result"
    report: dict[str, Any] | None = Field(
        default=None, description="The final report (research_reports.Report JSON)."
    )
    review: dict[str, Any] | None = Field(
        default=None, description="The last peer review, when there is one."
    )
    iteration_info: list[dict[str, Any]] = Field(
        default_factory=list, description="One entry per round."
    )
    iterations: int = Field(default=1, ge=0)


class ErrorRaised(_RunEvent):
    """Something failed; `done` still follows."""

    type: Literal["error"] = "error"
    message: str


class RunDone(_RunEvent):
    """The last event of every run: readers stop here."""

    type: Literal["done"] = "done"
    status: Literal["completed", "failed", "cancelled"] = "completed"


RunEvent = Annotated[
    AgentStarted
    | ReasoningShared
    | ToolCalled
    | ToolReturned
    | ToolProgressed
    | MessageChunkStreamed
    | AgentEnded
    | VerdictReached
    | ResultReady
    | ErrorRaised
    | RunDone,
    Field(discriminator="type"),
]
RUN_EVENT_ADAPTER: Final[TypeAdapter[RunEvent]] = TypeAdapter(RunEvent)


def parse_run_event(data: bytes | str) -> RunEvent:
    """Parse one event from its JSON wire form (raises pydantic.ValidationError on bad input)."""
    return RUN_EVENT_ADAPTER.validate_json(data)


__all__ = [
    "RUNS_STREAM",
    "RUN_EVENT_ADAPTER",
    "RUN_EVENT_SUBJECTS",
    "RUN_ID_PATTERN",
    "AgentEnded",
    "AgentStarted",
    "ErrorRaised",
    "MessageChunkStreamed",
    "ReasoningShared",
    "ResultReady",
    "RunDone",
    "RunEvent",
    "RunEventType",
    "ToolCalled",
    "ToolProgressed",
    "ToolReturned",
    "VerdictReached",
    "new_run_id",
    "parse_run_event",
    "run_event_msg_id",
    "run_event_subject",
    "valid_run_id",
]
