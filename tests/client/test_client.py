"""`research_client` against the real gateway (uvicorn, real NATS + Postgres): typed reads and
writes, errors as `ApiError` with the status, a run's SSE trace followed and resumed, exports."""

from __future__ import annotations

import uuid

import nats
import pytest
from pydantic import BaseModel

from research_client import ApiError, Claim, ResearchClient, Task
from research_client.models import AuditEntry, Finding, SearchResults, TaskAccepted
from research_contracts.runs import AgentStarted, ReasoningShared, RunDone
from research_gateway.main import create_app
from research_platform.settings import Settings
from research_runs import RunRecorder

pytestmark = pytest.mark.integration


async def test_tasks_claims_and_ledger_reads_are_typed(
    gateway: str, keys: dict[str, str], decided_claim: uuid.UUID
) -> None:
    with ResearchClient(gateway, keys["researcher"]) as rc:
        accepted = rc.submit_task("Does exercise improve sleep quality in adults?", tier="batched")
        assert isinstance(accepted, TaskAccepted) and accepted.status == "queued"
        again = rc.submit_task(
            "Does exercise improve sleep quality in adults?", task_id=accepted.task_id
        )
        assert again.task_id == accepted.task_id  # idempotent by the client's id
        task = rc.task(accepted.task_id)
        assert isinstance(task, Task) and task.tier == "batched" and not task.finished

        claim = rc.claim(decided_claim)
        assert (
            isinstance(claim, Claim)
            and claim.status == "pending"
            and claim.supports[0].source_id == "corpus:1"
        )
        listed = rc.claims(entity=claim.entity)
        assert [c.claim_id for c in listed] == [decided_claim]
        assert rc.claims(status="active", entity=claim.entity) == []
        assert all(isinstance(f, Finding) for f in rc.findings(limit=5))
        trail = rc.audit(claim_id=decided_claim)
        assert trail and all(
            isinstance(a, AuditEntry) and a.claim_id == decided_claim for a in trail
        )
        assert "research.claim.proposed" in {a.action for a in trail}


async def test_errors_carry_the_status_and_where_the_key_came_from(
    gateway: str, keys: dict[str, str]
) -> None:
    with ResearchClient(gateway, keys["reader"]) as rc:
        with pytest.raises(ApiError) as missing:
            rc.task(uuid.uuid4())
        assert missing.value.status == 404
        with pytest.raises(ApiError) as refused:
            rc.submit_task("A reader may not submit this question")
        assert refused.value.status == 403 and "argument" in str(refused.value)
    with ResearchClient(gateway, "rek_not-a-key") as rc, pytest.raises(ApiError) as unknown:
        rc.claims()
    assert unknown.value.status == 401


async def test_a_run_trace_is_followed_to_done_and_resumed_after_an_id(
    gateway: str, keys: dict[str, str], nc: nats.NATS, unique: str
) -> None:
    run_id = f"run-{unique}"
    recorder = RunRecorder(nc.jetstream(), run_id, agent="researcher")
    await recorder.emit(AgentStarted(run_id=run_id, agent="researcher"))
    await recorder.emit(ReasoningShared(run_id=run_id, agent="researcher", text="plan 3 searches"))
    await recorder.emit(ReasoningShared(run_id=run_id, agent="researcher", text="search 1 of 3"))
    await recorder.emit(RunDone(run_id=run_id))
    with ResearchClient(gateway, keys["reader"]) as rc:
        events = list(rc.run_events(run_id))
        assert [e.event.type for e in events] == ["agent_start", "reasoning", "reasoning", "done"]
        ids = [e.id for e in events if e.id is not None]
        assert len(ids) == len(events) and ids == sorted(ids) and len(set(ids)) == 4
        resumed = list(
            rc.run_events(run_id, last_event_id=ids[1])
        )  # what a reconnect sends as Last-Event-ID
        assert [e.id for e in resumed] == ids[2:]
        assert isinstance(resumed[0].event, ReasoningShared)
        assert resumed[0].event.text == "search 1 of 3"


async def test_a_report_is_read_and_exported_in_every_format(
    gateway: str, keys: dict[str, str], report_id: uuid.UUID
) -> None:
    with ResearchClient(gateway, keys["reader"]) as rc:
        report = rc.report(report_id)
        assert (
            report["kind"] == "review"
            and report["status"] == "completed"
            and report["version"] == 1
        )
        assert rc.export(report_id, "md").decode().startswith("# Vitamin D and fractures")
        assert rc.export(report_id, "pdf").startswith(b"%PDF")
        assert "10.1000/vitd" in rc.export(report_id, "bib").decode()
        assert "DO  - 10.1000/vitd" in rc.export(report_id, "ris").decode()
        assert '"DOI": "10.1000/vitd"' in rc.export(report_id, "csljson").decode()
        with pytest.raises(ValueError, match="unknown export format"):
            rc.export(report_id, "docx")
        with pytest.raises(ApiError) as missing:
            rc.export(uuid.uuid4(), "md")
        assert missing.value.status == 404


def test_every_field_the_client_reads_is_in_the_gateway_schema(servers) -> None:
    """The client's views name only fields the gateway's OpenAPI document declares (no drift)."""
    schemas = create_app(
        Settings(nats_url=servers.nats_url, database_url=servers.database_url, _env_file=None)
    ).openapi()["components"]["schemas"]
    pairs: dict[type[BaseModel], str] = {
        TaskAccepted: "TaskAccepted",
        Task: "TaskView",
        Claim: "ClaimView",
        Finding: "FindingView",
        AuditEntry: "AuditView",
        SearchResults: "SearchResults",
    }
    for model, name in pairs.items():
        assert set(model.model_fields) <= set(schemas[name]["properties"]), name


def test_the_gateway_answers_with_the_classes_the_client_parses() -> None:
    """One source of the views (`research_contracts.views`): each view the client reads is the very
    class a gateway route declares as its response model, not a copy of it."""
    from research_gateway import claims, records, search, tasks

    answered = set()
    for module in (claims, records, search, tasks):
        for route in module.router.routes:
            model = getattr(route, "response_model", None)
            answered |= {model, *getattr(model, "__args__", ())}
    for view in (TaskAccepted, Task, Claim, Finding, AuditEntry, SearchResults):
        assert view in answered, view.__name__


async def test_a_snapshot_holding_its_report_exports_and_a_bad_format_is_422(
    gateway: str,
    keys: dict[str, str],
    sessions,
    report_id: uuid.UUID,
    unique: str,
) -> None:
    """A source-list version keeps its `Report` under `report`: the shared route exports it too."""
    from research_ledger import UnitOfWork

    with ResearchClient(gateway, keys["reader"]) as rc:
        stored = rc.report(report_id)
    snapshot = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="scout")
        await ledger.reports.open(
            snapshot,
            kind="source_list",
            run_id=f"sl-{unique}",
            subject="vitamin d",
            subject_key="vitamin d",
        )
        await ledger.reports.save_version(
            snapshot,
            run_id=f"sl-{unique}",
            content={"report": stored["content"], "sources": []},
            markdown=stored["markdown"],
        )
    with ResearchClient(gateway, keys["reader"]) as rc:
        assert "10.1000/vitd" in rc.export(snapshot, "bib").decode()
        reply = rc.http.get(
            f"/api/research/v1/reports/{snapshot}/export", params={"format": "docx"}
        )
        assert reply.status_code == 422 and "format" in reply.json()["detail"][0]["loc"]
