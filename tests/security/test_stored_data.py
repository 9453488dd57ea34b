"""Nothing identifying is stored: the ledger keeps de-identified questions (every writer, every
mode), never `patient_ref`, audit rows never raw content, and migration 0006 scrubs old rows."""

from __future__ import annotations

import importlib.util
import json
import uuid
from datetime import UTC, datetime, timedelta
from types import ModuleType

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import RunResearch, Tier, subjects
from research_ledger import AuditAction, ClaimProposal, UnitOfWork
from research_ledger.audit import checked_payload
from research_ledger.errors import AuditPayloadError
from research_ledger.tables import ApiKey, AuditEvent, MemoryClaim, ResearchTask
from research_platform.broker import STREAMS, retained
from research_platform.settings import Settings
from research_privacy.boundary import digest as digest_of
from research_privacy.boundary import person_text
from tests.conftest import REPO
from tests.security.conftest import Gateway

API = "/api/research/v1"
NAMED = "Does metformin help Jane Roe (MRN 12345678, DOB 03/14/1950, phone 555-123-4567) with type 2 diabetes?"
VALUES = ("Jane Roe", "12345678", "03/14/1950", "555-123-4567")
PATIENT = "Jane Roe, 12 Elm Street, Springfield"


def _leaks(stored: object) -> list[str]:
    dumped = json.dumps(stored, default=str)
    return [value for value in (*VALUES, "Elm Street") if value in dumped]


@pytest.mark.unit
def test_the_dead_letter_stream_keeps_bytes_for_the_configured_age(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead_letters = next(c for c in STREAMS if c.name == subjects.DEAD_LETTER_STREAM)
    monkeypatch.setenv("DEAD_LETTER_MAX_AGE_DAYS", "7")
    days = Settings().dead_letter_max_age_days
    assert retained(dead_letters, days).max_age == 7 * 86400
    tasks = next(c for c in STREAMS if c.name == subjects.TASKS_STREAM)
    assert retained(tasks, days) is tasks


@pytest.mark.unit
def test_audit_payloads_refuse_raw_content_and_keep_only_a_digest_of_a_persons_text() -> None:
    with pytest.raises(AuditPayloadError, match="raw content"):
        checked_payload(
            AuditAction.CONSUMER_DEAD_LETTER,
            {"reason": "x", "sha256": "0" * 64, "size": 3, "body": "abc"},
        )
    stored = checked_payload(
        AuditAction.REPLICATOR_CONFIRMED, {"question": NAMED, "verdict": "confirmed"}
    )
    assert (
        _leaks(stored) == []
        and stored["question"].startswith("hmac:")
        and "metformin" not in stored["question"]
    )


@pytest.mark.integration
async def test_the_ledger_refuses_a_persons_text_that_did_not_pass_the_boundary(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """Every writer of a person's text: a raw value is refused (nothing written), the boundary's output is kept."""
    from research_ledger.deidentified import UncleanText
    from research_ledger.tables import ReportRow

    report_id = uuid.uuid4()
    async with sessions() as session:
        with pytest.raises(UncleanText, match="subject"):
            async with session.begin():
                await UnitOfWork(session, service="reviewer").reports.open(
                    report_id,
                    kind="review",
                    run_id=f"rv-{unique}",
                    subject=NAMED,
                    subject_key=NAMED.lower(),
                )
        with pytest.raises(UncleanText, match="watched claim"):
            async with session.begin():
                await UnitOfWork(session, service="verifier").watched.watch(
                    report_id, f"Metformin helps Jane Roe, MRN 12345678 {unique}"
                )
        task = RunResearch(
            question="Does metformin help type 2 diabetes?", entity=f"metformin {unique}"
        )
        raw = task.model_copy(
            update={"question": NAMED}
        )  # built around the contract: never validated
        with pytest.raises(UncleanText, match="question"):
            async with session.begin():
                await UnitOfWork(session, service="researcher").tasks.submit(raw)
    async with sessions() as session:
        assert (
            await session.get(ReportRow, report_id) is None
            and await session.get(ResearchTask, raw.task_id) is None
        )
    async with sessions() as session, session.begin():  # what the boundary gives is stored
        clean = RunResearch(question=NAMED, entity=f"metformin {unique}")
        assert (await UnitOfWork(session, service="researcher").tasks.submit(clean)).created


@pytest.mark.integration
async def test_a_submitted_question_is_stored_deidentified_and_patient_ref_never(
    gateway: Gateway,
    sessions: async_sessionmaker[AsyncSession],
    api_keys: dict[str, dict[str, str]],
    unique: str,
) -> None:
    body = {"question": NAMED, "entity": f"metformin {unique}", "patient_ref": PATIENT}
    key = {"Idempotency-Key": f"phi-{unique}", **api_keys["researcher"]}
    async with gateway() as (_, client):
        first = await client.post(f"{API}/tasks", json=body, headers=key)
        again = await client.post(
            f"{API}/tasks", json=body, headers=key
        )  # the same raw question is the same task
        assert (first.status_code, again.status_code) == (202, 200)
        task_id = uuid.UUID(first.json()["task_id"])
        view = (await client.get(f"{API}/tasks/{task_id}", headers=api_keys["reader"])).json()
    assert _leaks(view) == [] and "[NAME_1]" in view["question"]
    async with sessions() as session:
        row = await session.get(ResearchTask, task_id)
        audit = list(await session.scalars(select(AuditEvent).where(AuditEvent.task_id == task_id)))
    assert row is not None and _leaks([row.question, row.entity, row.request]) == []
    assert "patient_ref" not in row.request and PATIENT not in json.dumps(row.request)
    assert _leaks([[a.payload, a.subject_ids] for a in audit]) == []


@pytest.mark.integration
async def test_claims_are_stored_with_the_deidentified_question(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    task = RunResearch.model_validate(  # `patient_ref` is read by a validator, not a field
        {
            "question": NAMED,
            "entity": f"metformin {unique}",
            "tier": Tier.priority,
            "patient_ref": PATIENT,
        }
    )
    claim = ClaimProposal(
        claim_id=uuid.uuid4(),
        task_id=task.task_id,
        entity=task.entity or "",
        question=task.question,
        statement="Metformin lowers HbA1c.",
        confidence=0.5,
        supports=[],
        dropped_supports=0,
        model="offline",
        decay_at=datetime.now(UTC) + timedelta(days=30),
    )
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="researcher")
        assert await ledger.tasks.start(task)
        assert await ledger.claims.propose(claim, None, [])
    async with sessions() as session:
        stored = await session.get(MemoryClaim, claim.claim_id)
        row = await session.get(ResearchTask, task.task_id)
    assert stored is not None and _leaks(stored.question) == [] and "[MRN_1]" in stored.question
    assert (
        row is not None
        and _leaks([row.question, row.request]) == []
        and "patient_ref" not in row.request
    )


def _migration() -> ModuleType:
    path = REPO / "migrations" / "versions" / "0006_scrub_identifiers.py"
    spec = importlib.util.spec_from_file_location("scrub_0006", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.integration
async def test_migration_0006_scrubs_rows_written_before_it(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    task_id, claim_id = uuid.uuid4(), uuid.uuid4()
    raw_request = {
        "question": NAMED,
        "entity": "metformin",
        "patient_ref": PATIENT,
        "tier": "priority",
    }
    async with sessions() as session, session.begin():  # rows as the code before 0006 wrote them
        session.add(
            ResearchTask(
                id=task_id, question=NAMED, entity="metformin", tier="priority", request=raw_request
            )
        )
        session.add(
            MemoryClaim(
                id=claim_id, task_id=task_id, entity="metformin", question=NAMED, statement="s"
            )
        )
        await session.flush()
        session.add_all(
            [
                AuditEvent(
                    service="researcher",
                    action="consumer.dead_letter",
                    task_id=task_id,
                    payload={"reason": "bad", "body": NAMED, "sha256": "0" * 64, "size": 9},
                ),
                AuditEvent(
                    service="replicator",
                    action="research.replicator.confirmed",
                    claim_id=claim_id,
                    payload={"question": NAMED, "verdict": "confirmed"},
                ),
            ]
        )
    async with sessions() as session, session.begin():
        await (await session.connection()).run_sync(_migration().scrub)
    async with sessions() as session:
        task = await session.get(ResearchTask, task_id)
        claim = await session.get(MemoryClaim, claim_id)
        audit = list(await session.scalars(select(AuditEvent).where(AuditEvent.task_id == task_id)))
        audit += list(
            await session.scalars(select(AuditEvent).where(AuditEvent.claim_id == claim_id))
        )
        assert task is not None and claim is not None
        assert (
            _leaks([task.question, task.request, claim.question, [a.payload for a in audit]]) == []
        )
        assert "patient_ref" not in task.request and "[NAME_1]" in claim.question
        dead = next(a for a in audit if a.action == "consumer.dead_letter")
        assert (
            "body" not in dead.payload
            and dead.payload["sha256"] == "0" * 64
            and dead.payload["size"] == 9
        )
        with pytest.raises(Exception, match="append-only"):  # the trigger is back on
            async with session.begin_nested():
                await session.execute(
                    text("UPDATE audit_events SET payload = '{}' WHERE id = :id"), {"id": dead.id}
                )


def _migration_0010() -> ModuleType:
    path = REPO / "migrations" / "versions" / "0010_scrub_mode_identifiers.py"
    spec = importlib.util.spec_from_file_location("scrub_0010", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.integration
async def test_migration_0010_scrubs_what_the_modes_stored_before_the_boundary(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    from research_ledger.tables import ReportRow, ReportVersionRow
    from research_ledger.watched import WatchedClaimRow

    report_id, claim_id = uuid.uuid4(), uuid.uuid4()
    markdown = f"# Review: {NAMED}\n\nMetformin lowered HbA1c in 2005 [1]."
    async with sessions() as session, session.begin():  # rows as the modes wrote them before 0010
        session.add(
            ReportRow(
                id=report_id,
                kind="review",
                status="completed",
                run_id=f"rv-{unique}",
                subject=NAMED,
                subject_key=NAMED.lower()[:200],
                request={"keywords": ["Jane Roe"], "filters": {}},
                owner={},
                save_to={"kind": "note", "id": "12345678"},
                current_version=1,
            )
        )
        await session.flush()
        session.add(
            ReportVersionRow(
                report_id=report_id,
                version=1,
                run_id=f"rv-{unique}",
                content={"title": NAMED, "quote": "lowered HbA1c in 2005"},
                markdown=markdown,
                citation_check={},
                review={"summary": f"covers {NAMED}"},
                claim_ids=[],
            )
        )
        session.add(
            MemoryClaim(
                id=claim_id, task_id=None, entity="metformin", question=NAMED, statement="s"
            )
        )
        session.add(
            WatchedClaimRow(
                verification_id=report_id,
                claim=NAMED,
                interval_days=7,
                next_due_at=datetime.now(UTC),
                runs=0,
            )
        )
        await session.flush()
        session.add(
            AuditEvent(
                service="reviewer",
                action="report.opened",
                claim_id=claim_id,
                payload={"topic": NAMED, "subject_key": NAMED.lower(), "kind": "review"},
            )
        )
    async with sessions() as session, session.begin():
        await (await session.connection()).run_sync(_migration_0010().scrub)
    async with sessions() as session:
        report = await session.get(ReportRow, report_id)
        version = await session.get(ReportVersionRow, (report_id, 1))
        claim = await session.get(MemoryClaim, claim_id)
        watched = await session.get(WatchedClaimRow, report_id)
        audit = list(
            await session.scalars(select(AuditEvent).where(AuditEvent.claim_id == claim_id))
        )
    assert report is not None and version is not None and claim is not None and watched is not None
    stored = [
        report.subject,
        report.subject_key,
        report.request,
        report.save_to,
        version.content,
        version.markdown,
        version.review,
        claim.question,
        watched.claim,
        [a.payload for a in audit],
    ]
    assert _leaks(stored) == [] and "Jane" not in json.dumps(stored, default=str)
    assert "[NAME_1]" in report.subject and "[NAME_1]" in version.markdown
    assert "lowered HbA1c in 2005" in version.markdown  # the literature quoted is left as it is
    assert audit[0].payload["topic"].startswith("sha256:") and audit[0].payload["kind"] == "review"


def _migration_0011() -> ModuleType:
    path = REPO / "migrations" / "versions" / "0011_digest_keys_in_audit.py"
    spec = importlib.util.spec_from_file_location("scrub_0011", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.integration
async def test_an_idempotency_key_and_a_key_name_are_kept_as_digests_only(
    gateway: Gateway,
    sessions: async_sessionmaker[AsyncSession],
    api_keys: dict[str, dict[str, str]],
    unique: str,
) -> None:
    """Both are free text a person types: no audit row, no `GET /audit` answer and no MCP
    `get_claim` history holds them, the key's stored label is de-identified — and migration 0011
    digests the audit rows written before."""
    from research_gateway.auth import ApiKeys
    from research_gateway.mcp.gateway_api import GatewayApi
    from research_gateway.mcp.tools import get_claim

    typed = f"retry for Jane Roe MRN 12345678 {unique}"
    label = f"Jane Roe's laptop {unique}"
    async with sessions() as session, session.begin():
        key_id, _ = await ApiKeys(UnitOfWork(session, service="gateway")).issue(
            "reader", name=label
        )
    body = {
        "question": "Does metformin lower HbA1c in type 2 diabetes?",
        "entity": f"metformin {unique}",
    }
    async with gateway() as (app, client):
        accepted = await client.post(
            f"{API}/tasks", json=body, headers={"Idempotency-Key": typed, **api_keys["researcher"]}
        )
        assert accepted.status_code == 202, accepted.text
        task_id = uuid.UUID(accepted.json()["task_id"])
        claim = ClaimProposal(
            claim_id=uuid.uuid4(),
            task_id=task_id,
            entity=body["entity"],
            question=body["question"],
            statement="Metformin lowers HbA1c.",
            confidence=0.5,
            supports=[],
            dropped_supports=0,
            model="offline",
            decay_at=datetime.now(UTC) + timedelta(days=30),
        )
        async with sessions() as session, session.begin():
            assert await UnitOfWork(session, service="researcher").claims.propose(claim, None, [])
        served = [
            (await client.get(f"{API}/audit", params=params, headers=api_keys["reader"])).json()
            for params in (
                {"task_id": str(task_id)},
                {"action": "research.admin.key_created", "limit": "1000"},
            )
        ]
        api = GatewayApi.in_process(app, api_keys["reader"]["X-API-Key"])

        async def quiet(progress: float, message: str) -> None:
            return None

        try:
            history = (await get_claim(api, {"claim_id": str(claim.claim_id)}, quiet))["history"]
        finally:
            await api.aclose()
    async with sessions() as session:
        key = await session.get(ApiKey, key_id)
        assert key is not None
        label_kept = key.name
        rows = list(await session.scalars(select(AuditEvent).where(AuditEvent.task_id == task_id)))
        rows += list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.action == "research.admin.key_created",
                    AuditEvent.subject_ids["key_id"].astext == str(key_id),
                )
            )
        )
    stored = json.dumps(
        [[r.payload, r.subject_ids] for r in rows] + [served, history, label_kept], default=str
    )
    assert typed not in stored and label not in stored and "Jane Roe" not in stored
    submitted = next(r for r in rows if r.action == "research.task.submitted")
    created = next(r for r in rows if r.action == "research.admin.key_created")
    assert submitted.payload["idempotency_key"].startswith("hmac:") and created.payload[
        "name"
    ].startswith("hmac:")

    async with sessions() as session, session.begin():  # rows as the code before 0011 wrote them
        old = [
            AuditEvent(
                service="gateway",
                action="research.task.submitted",
                task_id=uuid.uuid4(),
                payload={"tier": "batched", "idempotency_key": typed},
            ),
            AuditEvent(
                service="gateway",
                action="research.admin.key_created",
                subject_ids={"key_id": str(uuid.uuid4())},
                payload={"role": "reader", "name": label},
            ),
        ]
        session.add_all(old)
        old_key = ApiKey(id=uuid.uuid4(), name=label, role="reader", key_hash=uuid.uuid4().hex)
        session.add(old_key)
    async with sessions() as session, session.begin():
        await (await session.connection()).run_sync(_migration_0011().scrub)
    async with sessions() as session:
        scrubbed = [(await session.get(AuditEvent, row.id)) for row in old]
        relabelled = await session.get(ApiKey, old_key.id)
    assert (
        relabelled is not None
        and "Jane Roe" not in relabelled.name
        and relabelled.name == person_text(label)
    )
    assert typed not in json.dumps([s.payload for s in scrubbed if s])
    assert [s.payload for s in scrubbed if s] == [
        {"tier": "batched", "idempotency_key": digest_of(typed)},
        {"role": "reader", "name": digest_of(label)},
    ]
