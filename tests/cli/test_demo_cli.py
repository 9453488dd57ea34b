"""`research-engine demo` gives up waiting for verdicts with exit status 1 and says why on stderr
(it once passed the message to `typer.Exit`, whose argument is the exit code)."""

from __future__ import annotations

import httpx
import pytest
import typer

from research_engine.cli import _await_claims

pytestmark = pytest.mark.unit


def _tasks(request: httpx.Request) -> httpx.Response:
    task_id = request.url.path.rsplit("/", 1)[-1]
    if task_id == "decided":
        return httpx.Response(200, json={"status": "done", "claim": {"status": "active"}})
    return httpx.Response(200, json={"status": "running", "claim": None})


def test_waiting_past_the_timeout_exits_1_and_names_what_was_done(capsys):
    client = httpx.Client(base_url="http://demo", transport=httpx.MockTransport(_tasks))
    with client, pytest.raises(typer.Exit) as exited:
        _await_claims(client, ["decided", "pending"], timeout=0.2)
    assert exited.value.exit_code == 1
    assert "timed out waiting for verdicts (1/2 done)" in capsys.readouterr().err


def test_decided_tasks_come_back_in_order():
    with httpx.Client(base_url="http://demo", transport=httpx.MockTransport(_tasks)) as client:
        views = _await_claims(client, ["decided"], timeout=5.0)
    assert views == [{"status": "done", "claim": {"status": "active"}}]
