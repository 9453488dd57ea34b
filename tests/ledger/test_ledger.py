"""The ledger on real PostgreSQL + pgvector: claim and audit row in one transaction; append-only audit."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from research_contracts import RunResearch, SourceHit
from research_ledger import AuditAction, Ledger, TaskStatus, UnitOfWork
from research_ledger.tables import AuditEvent, MemoryClaim, ResearchSource, ResearchTask
from research_llm import ClaimDraft, DraftOutcome, EvidenceDoc, SupportDraft
from research_researcher import prepare, reshape

pytestmark = pytest.mark.integration


def _claim(unique: str) -> tuple[reshape.ProposedClaim, list[SourceHit]]:
    task = prepare.normalise_task(RunResearch(question=f"Does {unique} help?", entity=unique))
    text_ = f"In a randomised trial {unique} helped most patients."
    evidence = [EvidenceDoc(source_id=f"corpus:{unique}", title="Trial", text=text_)]
    draft = ClaimDraft(
        statement=f"{unique} helps.",
        entity=unique,
        confidence=0.7,
        supports=[SupportDraft(source_id=f"corpus:{unique}", quote=text_)],
    )
    claim = reshape.to_claim(
        task, DraftOutcome(draft=draft, provider="offline", model="m", failures=[]), evidence
    )
    return claim, [
        SourceHit(source_id=f"corpus:{unique}", source="corpus", title="Trial", abstract=text_)
    ]


async def _audit_count(sessions, claim_id: uuid.UUID) -> int:
    async with sessions() as session:
        return await session.scalar(
            select(func.count()).select_from(AuditEvent).where(AuditEvent.claim_id == claim_id)
        )


async def test_claim_and_its_audit_row_commit_together(sessions, unique: str) -> None:
    claim, hits = _claim(unique)
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="researcher")
        assert await ledger.claims.propose(claim, [0.1] * 384, hits)
    async with sessions() as session:
        stored = await session.get(MemoryClaim, claim.claim_id)
        assert (
            stored is not None
            and stored.status == "pending"
            and stored.supports[0]["source_id"] == f"corpus:{unique}"
        )
        assert await session.get(ResearchSource, f"corpus:{unique}") is not None
    assert await _audit_count(sessions, claim.claim_id) == 1

    async with (
        sessions() as session,
        session.begin(),
    ):  # redelivery: no second claim, no second audit row
        assert not await UnitOfWork(session, service="researcher").claims.propose(
            claim, [0.1] * 384, hits
        )
    assert await _audit_count(sessions, claim.claim_id) == 1


async def test_a_failed_transaction_leaves_neither_claim_nor_audit(sessions, unique: str) -> None:
    claim, hits = _claim(unique)
    with pytest.raises(DBAPIError):  # noqa: PT012 - the transaction is what fails
        async with sessions() as session, session.begin():
            await UnitOfWork(session, service="researcher").claims.propose(claim, [0.1] * 384, hits)
            await session.execute(text("SELECT 1/0"))  # the statement after the insert fails
    async with sessions() as session:
        assert await session.get(MemoryClaim, claim.claim_id) is None
    assert await _audit_count(sessions, claim.claim_id) == 0


async def test_audit_events_refuse_update_and_delete(sessions, unique: str) -> None:
    async with sessions() as session, session.begin():
        session.add(AuditEvent(service="test", action=f"test.{unique}", subject_ids={}, payload={}))
    for statement in (
        f"UPDATE audit_events SET action = 'tampered' WHERE action = 'test.{unique}'",  # noqa: S608 - the test's own id
        f"DELETE FROM audit_events WHERE action = 'test.{unique}'",  # noqa: S608 - the test's own id
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            async with sessions() as session, session.begin():
                await session.execute(text(statement))
    async with sessions() as session:
        assert (
            await session.scalar(
                select(func.count())
                .select_from(AuditEvent)
                .where(AuditEvent.action == f"test.{unique}")
            )
            == 1
        )


async def test_only_the_retention_function_removes_audit_rows(sessions, unique: str) -> None:
    async with sessions() as session, session.begin():
        await session.execute(
            text(
                "INSERT INTO audit_events (occurred_at, service, action, subject_ids, payload) VALUES (now() - interval '400 days', 'test', :a, '{}', '{}')"
            ),
            {"a": f"old.{unique}"},
        )
    async with sessions() as session, session.begin():
        removed = await session.scalar(
            text("SELECT audit_events_purge(now() - interval '365 days')")
        )
    assert removed >= 1
    async with sessions() as session:
        assert (
            await session.scalar(
                select(func.count())
                .select_from(AuditEvent)
                .where(AuditEvent.action == f"old.{unique}")
            )
            == 0
        )


async def test_fail_is_terminal_idempotent_and_audited_once(sessions, unique: str) -> None:
    task = RunResearch(question=f"Does {unique} help?", entity=unique)
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        assert (await ledger.tasks.submit(task)).created
        assert await ledger.tasks.start(task)
        assert await ledger.tasks.fail(task.task_id, "the connector \x00 said no")
        assert not await ledger.tasks.fail(
            task.task_id, "a second reason"
        )  # terminal: the first reason stays
        assert not await ledger.tasks.start(task)  # a redelivery never revives a failed task
    async with sessions() as session:
        row = await session.get(ResearchTask, task.task_id)
        assert row.status == TaskStatus.failed and row.error == "the connector \ufffd said no"
        actions = list(
            await session.scalars(
                select(AuditEvent.action).where(AuditEvent.task_id == task.task_id)
            )
        )
    assert sorted(actions) == sorted(
        [AuditAction.TASK_SUBMITTED, AuditAction.TASK_STARTED, AuditAction.TASK_FAILED]
    )


async def test_a_poison_payload_is_stored_not_rejected_by_jsonb(sessions, unique: str) -> None:
    hostile = f"{unique}\x00\ud800" + b"\xfe\xff".decode("utf-8", "surrogateescape")
    async with sessions() as session, session.begin():
        event = UnitOfWork(session, service="test").audit(
            AuditAction.CONSUMER_DEAD_LETTER,
            subject_ids={"subject": hostile},
            payload={"subject": hostile, "reason": hostile, "sha256": "0" * 64, "size": 3},
        )
    async with sessions() as session:
        stored = await session.get(AuditEvent, event.id)
    assert stored.payload["reason"].startswith(unique) and "\x00" not in stored.payload["reason"]
    assert set(stored.payload) == {"subject", "reason", "sha256", "size"}  # never a body


async def test_a_source_cited_again_stays_retracted(sessions, unique: str) -> None:
    claim, hits = _claim(unique)
    source_id = f"corpus:{unique}"
    async with sessions() as session, session.begin():
        assert await UnitOfWork(session, service="researcher").claims.propose(
            claim, [0.1] * 384, hits
        )
    async with sessions() as session, session.begin():
        assert await UnitOfWork(session, service="replicator").claims.retract_sources(
            [source_id]
        ) == [source_id]
    # another task cites the same source; its search hit does not carry the retraction
    again, _ = _claim(unique)
    renamed = hits[0].model_copy(update={"title": "Trial (corrected title)"})
    async with sessions() as session, session.begin():
        assert await UnitOfWork(session, service="researcher").claims.propose(
            again, [0.1] * 384, [renamed]
        )
    async with sessions() as session:
        source = await session.get(ResearchSource, source_id)
        assert source is not None and source.title == "Trial (corrected title)"
        assert source.retracted is True


async def test_unit_of_work_commits_once_and_rolls_back_on_error(sessions, unique: str) -> None:
    """`Ledger.unit_of_work` is the transaction: what its block wrote lands together when the block
    ends, and nothing lands when the block raises; `Ledger.reading` commits nothing it wrote."""
    ledger = Ledger(sessions)
    kept, lost = _claim(f"{unique}k"), _claim(f"{unique}l")
    async with ledger.unit_of_work(service="researcher") as uow:
        assert await uow.claims.propose(kept[0], [0.1] * 384, kept[1])
        async with sessions() as other:  # not yet visible outside the unit of work
            assert await other.get(MemoryClaim, kept[0].claim_id) is None
    assert await _audit_count(sessions, kept[0].claim_id) == 1

    async def write_then_fail() -> None:
        async with ledger.unit_of_work(service="researcher") as uow:
            assert await uow.claims.propose(lost[0], [0.1] * 384, lost[1])
            raise RuntimeError("after the write")

    with pytest.raises(RuntimeError, match="after the write"):
        await write_then_fail()
    async with sessions() as session:
        assert await session.get(MemoryClaim, lost[0].claim_id) is None
    assert await _audit_count(sessions, lost[0].claim_id) == 0

    async with ledger.reading() as uow:
        assert await uow.claims.propose(lost[0], [0.1] * 384, lost[1])
    async with sessions() as session:
        assert await session.get(MemoryClaim, lost[0].claim_id) is None
    async with ledger.reading() as uow:
        read = await uow.claims.get(kept[0].claim_id)
    assert read is not None and read.status == "pending"  # a row read stays usable after the block
