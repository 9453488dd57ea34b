"""What the gateway answers, as typed models (the shapes of its OpenAPI document).

The request and event models are the shared contracts (`research_contracts`), and so are the
views: the gateway answers with `research_contracts.views` and the client parses with the same
classes, under the names this client has always used (`Claim` is `ClaimView`, `Task` is
`TaskView`…). Fields a newer gateway adds are ignored, so an older client keeps working.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from research_contracts import ControlReply
from research_contracts.runs import RunEvent
from research_contracts.views import (
    TERMINAL_CLAIM,
    AuditView,
    ClaimView,
    FindingView,
    SearchResults,
    TaskAccepted,
    TaskView,
    VerdictView,
)

__all__ = [
    "TERMINAL_CLAIM",
    "AuditEntry",
    "Claim",
    "ControlReply",
    "Finding",
    "ModeAccepted",
    "RunEventItem",
    "SearchResults",
    "Task",
    "TaskAccepted",
    "Verdict",
]

Verdict = VerdictView
Claim = ClaimView
Task = TaskView
Finding = FindingView
AuditEntry = AuditView


class ModeAccepted(BaseModel):
    """`202` of a mode request (review, verification, source list): its id and the run to watch."""

    model_config = ConfigDict(extra="allow")  # the id's name differs per mode (see `id`)

    run_id: str

    @property
    def id(self) -> str:
        """The mode's own id (`review_id`, `verification_id`, `source_list_id`…)."""
        for name, value in (self.model_extra or {}).items():
            if name.endswith("_id") and value:
                return str(value)
        return self.run_id


class RunEventItem(BaseModel):
    """One event of a run's SSE stream: `id` is what a reconnect resumes after."""

    id: int | None
    event: RunEvent
