"""The gateway's response views, as the client reads them: which claims are decided, when a task
is finished, and that a field a newer gateway adds does not break an older client."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from research_contracts import ClaimStatus
from research_contracts.views import TERMINAL_CLAIM, ClaimView, TaskView

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 2, tzinfo=UTC)


def _claim(status: str, **more: Any) -> dict[str, Any]:
    return {
        "claim_id": str(uuid.uuid4()),
        "task_id": None,
        "entity": "vitamin D",
        "question": "Does vitamin D reduce fractures?",
        "statement": "It reduces them a little.",
        "status": status,
        "confidence": 0.7,
        "supports": [{"source_id": "corpus:1", "quote": "fewer fractures"}],
        "supersedes": [],
        "superseded_by": None,
        "model": "offline-critic",
        "created_at": NOW.isoformat(),
        "decided_at": None,
        **more,
    }


def _task(status: str, claim: dict[str, Any] | None) -> TaskView:
    return TaskView.model_validate(
        {
            "task_id": str(uuid.uuid4()),
            "question": "Does vitamin D reduce fractures?",
            "entity": None,
            "tier": "priority",
            "status": status,
            "origin": "api",
            "error": None,
            "created_at": NOW.isoformat(),
            "claim": claim,
        }
    )


def test_every_claim_status_but_pending_is_terminal() -> None:
    assert {status.value for status in ClaimStatus} - {"pending"} == TERMINAL_CLAIM
    assert ClaimView.model_validate(_claim("critic_quarantine")).decided
    assert not ClaimView.model_validate(_claim("pending")).decided


@pytest.mark.parametrize(
    ("status", "claim", "finished"),
    [
        ("queued", None, False),
        ("running", "pending", False),
        ("done", "active", True),
        ("done", "rejected", True),
        ("failed", None, True),
    ],
)
def test_a_task_is_finished_when_it_failed_or_its_claim_is_decided(
    status: str, claim: str | None, finished: bool
) -> None:
    view = _task(status, _claim(claim) if claim else None)
    assert view.finished is finished


def test_an_older_client_ignores_fields_a_newer_gateway_adds() -> None:
    view = ClaimView.model_validate(_claim("active", added_later={"x": 1}))
    assert view.status == "active"
    assert "added_later" not in view.model_dump()
