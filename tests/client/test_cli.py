"""The CLI for people against the real gateway (uvicorn, real NATS + Postgres) through typer's
CliRunner: JSON with --json, text without it, the key from RESEARCH_API_KEY, clear failures."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import nats
import pytest
from typer.testing import CliRunner

from research_contracts.runs import AgentStarted, RunDone, ToolCalled
from research_engine.cli import app
from research_runs import RunRecorder

pytestmark = pytest.mark.integration

runner = CliRunner()


def run(args: list[str], key: str | None, **env: str) -> tuple[int, str]:
    environment = {
        "RESEARCH_API_KEY": key or "",
        "RESEARCH_CONFIG": "/nonexistent/config.toml",
        "DATA_DIR": "/nonexistent",
        **env,
    }
    result = runner.invoke(app, args, env=environment)
    return result.exit_code, result.output


async def test_ask_then_claims_and_findings_as_json(
    gateway: str, keys: dict[str, str], decided_claim: uuid.UUID
) -> None:
    code, out = run(
        [
            "ask",
            "Does green tea lower blood pressure?",
            "--tier",
            "batched",
            "--json",
            "--url",
            gateway,
        ],
        keys["researcher"],
    )
    assert code == 0, out
    accepted = json.loads(out)
    assert accepted["status"] == "queued" and uuid.UUID(accepted["task_id"])

    code, out = run(
        ["claims", "show", str(decided_claim), "--json", "--url", gateway], keys["reader"]
    )
    assert code == 0, out
    shown = json.loads(out)
    assert shown["claim_id"] == str(decided_claim) and shown["status"] == "pending"

    code, out = run(
        ["claims", "list", "--entity", shown["entity"], "--json", "--url", gateway], keys["reader"]
    )
    assert code == 0 and [c["claim_id"] for c in json.loads(out)] == [str(decided_claim)]

    code, out = run(
        ["claims", "list", "--entity", shown["entity"], "--url", gateway], keys["reader"]
    )
    assert code == 0 and "pending" in out and str(decided_claim)[:8] in out  # the table for people

    code, out = run(["findings", "--json", "--limit", "3", "--url", gateway], keys["reader"])
    assert code == 0 and isinstance(json.loads(out), list)


async def test_watch_a_run_prints_its_events(
    gateway: str, keys: dict[str, str], nc: nats.NATS, unique: str
) -> None:
    run_id = f"cli-{unique}"
    recorder = RunRecorder(nc.jetstream(), run_id, agent="verifier")
    await recorder.emit(AgentStarted(run_id=run_id, agent="verifier"))
    await recorder.emit(
        ToolCalled(
            run_id=run_id,
            agent="verifier",
            tool_call_id="tc-1",
            tool_id="search",
            params={"q": "x"},
        )
    )
    await recorder.emit(RunDone(run_id=run_id))
    code, out = run(["watch", run_id, "--json", "--url", gateway], keys["reader"])
    assert code == 0, out
    assert [e["type"] for e in json.loads(out)] == ["agent_start", "tool_call", "done"]
    code, out = run(["watch", run_id, "--url", gateway], keys["reader"])
    assert code == 0 and "tool_call" in out and f"run {run_id} done (3 events)" in out


async def test_export_writes_the_file_and_failures_are_clear(
    gateway: str, keys: dict[str, str], report_id: uuid.UUID, tmp_path: Path
) -> None:
    target = tmp_path / "refs.bib"
    code, out = run(
        ["export", str(report_id), "--format", "bib", "-o", str(target), "--url", gateway],
        keys["reader"],
    )
    assert code == 0, out
    assert "10.1000/vitd" in target.read_text()
    code, out = run(["export", str(report_id), "--format", "md", "--url", gateway], keys["reader"])
    assert code == 0 and out.startswith("# Vitamin D and fractures")

    code, out = run(["claims", "list", "--url", gateway], None)  # no key anywhere
    assert code == 2 and "401" in out
    code, out = run(["ask", "Is this allowed for a reader?", "--url", gateway], keys["reader"])
    assert (
        code == 2 and "403" in out and "RESEARCH_API_KEY" in out
    )  # where the refused key came from


def test_logs_prints_the_last_lines_of_a_service(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "critic.log").write_text(
        "".join(f'{{"event": "line {n}", "service": "critic"}}\n' for n in range(10))
    )
    code, out = run(["logs", "critic", "-n", "3", "--data-dir", str(tmp_path)], None)
    assert code == 0 and out.splitlines() == [
        f'{{"event": "line {n}", "service": "critic"}}' for n in (7, 8, 9)
    ]
    code, out = run(["logs", "nope", "--data-dir", str(tmp_path)], None)
    assert code == 2 and "critic" in out  # names the logs there are


async def test_rerun_a_review_then_refused_while_it_runs(
    gateway: str, keys: dict[str, str], report_id: uuid.UUID, sessions, unique: str
) -> None:
    # the fixture's review was stored through the ledger, not asked for by a key: only an admin may re-run it
    code, out = run(
        ["rerun", str(report_id), "--no-watch", "--json", "--url", gateway], keys["researcher"]
    )
    assert code == 2 and "403" in out and "not yours" in out, out
    code, out = run(
        ["rerun", str(report_id), "--no-watch", "--json", "--url", gateway], keys["admin"]
    )
    assert code == 0, out
    accepted = json.loads(out)
    assert accepted["review_id"] == str(report_id) and accepted["run_id"]
    code, out = run(["rerun", str(report_id), "--no-watch", "--url", gateway], keys["admin"])
    assert code == 2 and "409" in out  # the new run has not ended

    from research_ledger import UnitOfWork

    verification = uuid.uuid4()
    async with sessions() as session, session.begin():
        await UnitOfWork(session, service="verifier").reports.open(
            verification, kind="verification", run_id=f"v-{unique}", subject="s", subject_key="k"
        )
    code, out = run(["rerun", str(verification), "--no-watch", "--url", gateway], keys["admin"])
    assert code == 2 and "not re-run by hand" in out
