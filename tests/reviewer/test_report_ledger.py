"""Reports as ledger records on real PostgreSQL: open → version → complete, idempotent saves,
and the living part — a claim the report rests on leaves `active` or gets an undermining
finding, and the report goes stale with an audit row (and only completed reports do)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from research_contracts import CriticVerdict, Support, Verdict
from research_ledger import AuditAction, ClaimProposal, UnitOfWork
from research_ledger.tables import AuditEvent, Finding, ReportClaim

pytestmark = pytest.mark.integration


def _proposal(entity: str, statement: str) -> ClaimProposal:
    return ClaimProposal(
        claim_id=uuid.uuid4(),
        task_id=None,
        entity=entity,
        question=entity,
        statement=statement,
        confidence=0.8,
        supports=[Support(source_id="corpus:1", quote=statement)],
        dropped_supports=0,
        model="offline-test",
        decay_at=datetime.now(UTC) + timedelta(days=365),
    )


async def _actions(sessions, report_id: uuid.UUID) -> list[str]:
    async with sessions() as session:
        rows = await session.scalars(
            select(AuditEvent.action)
            .where(AuditEvent.subject_ids["report_id"].astext == str(report_id))
            .order_by(AuditEvent.id)
        )
        return list(rows)


async def _report_with_claims(sessions, unique: str, n: int = 2):
    report_id = uuid.uuid4()
    claims = [_proposal(f"topic-{unique}", f"Finding {i} about {unique} holds.") for i in range(n)]
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="reviewer")
        assert await ledger.reports.open(
            report_id,
            kind="review",
            run_id=f"rv-{unique}",
            subject=f"topic {unique}",
            subject_key=f"topic-{unique}",
        )
        assert not await ledger.reports.open(
            report_id, kind="review", run_id=f"rv-{unique}", subject="x", subject_key="x"
        )
        for claim in claims:
            await ledger.claims.propose(claim, None, [])
        version = await ledger.reports.save_version(
            report_id,
            run_id=f"rv-{unique}",
            content={"title": "t"},
            markdown="# t\n",
            citation_check={"ok": True},
            claim_ids=[c.claim_id for c in claims],
        )
        assert version == 1
        assert await ledger.reports.complete(report_id, outcome="PASS")
    for claim in claims:  # the critic promotes them
        async with sessions() as session, session.begin():
            verdict = CriticVerdict(
                verdict=Verdict.promote, score=0.9, reasoning="ok", model="test"
            )
            await UnitOfWork(session, service="critic").verdicts.decide(
                claim.claim_id, verdict, {c.claim_id for c in claims}
            )
    return report_id, claims


async def test_report_lifecycle_is_audited_and_a_run_saves_one_version(
    sessions, unique: str
) -> None:
    report_id, claims = await _report_with_claims(sessions, unique)
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="reviewer")
        again = await ledger.reports.save_version(
            report_id, run_id=f"rv-{unique}", content={}, markdown=""
        )
        assert again == 1  # the same run saving again (a redelivery) changes nothing
        assert not await ledger.reports.complete(report_id)
        row = await ledger.reports.get(report_id)
        assert row is not None and row.current_version == 1
        assert await ledger.reports.get(report_id, kind="verification") is None
    assert await _actions(sessions, report_id) == [
        AuditAction.REPORT_OPENED.value,
        AuditAction.REPORT_VERSION_SAVED.value,
        AuditAction.REPORT_COMPLETED.value,
    ]
    async with sessions() as session:
        linked = set(
            await session.scalars(
                select(ReportClaim.claim_id).where(ReportClaim.report_id == report_id)
            )
        )
    assert linked == {c.claim_id for c in claims}


async def test_superseded_claim_makes_the_report_stale_then_refresh_reopens_it(
    sessions, unique: str
) -> None:
    report_id, claims = await _report_with_claims(sessions, unique)
    async with sessions() as session:
        assert not [
            u
            for u in await UnitOfWork(session, service="t").reports.undermined_claims()
            if u.claim_id in {c.claim_id for c in claims}
        ]
    newer = _proposal(f"topic-{unique}", f"A better finding about {unique}.")
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="critic")
        await ledger.claims.propose(newer, None, [])
        verdict = CriticVerdict(
            verdict=Verdict.supersede,
            score=0.95,
            reasoning="better",
            supersedes=[claims[0].claim_id],
            model="t",
        )
        await ledger.verdicts.decide(newer.claim_id, verdict, {c.claim_id for c in claims})
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="reviewer")
        undermined = [
            u
            for u in await ledger.reports.undermined_claims()
            if u.claim_id in {c.claim_id for c in claims}
        ]
        assert [(u.claim_id, u.reason) for u in undermined] == [
            (claims[0].claim_id, "claim superseded")
        ]
        stale = await ledger.reports.mark_stale(claims[0].claim_id, undermined[0].reason)
        assert [s.report_id for s in stale] == [report_id]
        assert await ledger.reports.mark_stale(claims[0].claim_id, "again") == []  # already stale
        row = await ledger.reports.get(report_id)
        assert row is not None and row.status == "stale" and row.stale_reason == "claim superseded"
        assert await ledger.reports.refresh(report_id, run_id=f"rf-{unique}") == "stale"
        assert (
            await ledger.reports.refresh(report_id, run_id=f"rf2-{unique}") is None
        )  # already running
    assert (await _actions(sessions, report_id))[-2:] == [
        AuditAction.REPORT_STALE.value,
        AuditAction.REPORT_REFRESH_REQUESTED.value,
    ]


async def test_open_undermining_finding_marks_stale_but_a_sibling_supersession_does_not(
    sessions, unique: str
) -> None:
    _report_id, claims = await _report_with_claims(sessions, unique)
    async with (
        sessions() as session,
        session.begin(),
    ):  # claim 1 superseded by claim 0 of the same report
        ledger = UnitOfWork(session, service="critic")
        await ledger.verdicts.supersede(claims[0].claim_id, [claims[1].claim_id], datetime.now(UTC))
    async with sessions() as session:
        mine = {c.claim_id for c in claims}
        assert not [
            u
            for u in await UnitOfWork(session, service="t").reports.undermined_claims()
            if u.claim_id in mine
        ]
    async with sessions() as session, session.begin():
        session.add(
            Finding(
                id=uuid.uuid4(),
                agent="librarian",
                kind="broken_provenance",
                claim_ids=[claims[0].claim_id],
                payload={},
            )
        )
    async with sessions() as session:
        undermined = [
            u
            for u in await UnitOfWork(session, service="t").reports.undermined_claims()
            if u.claim_id in mine
        ]
    assert [(u.claim_id, u.reason) for u in undermined] == [
        (claims[0].claim_id, "finding broken_provenance")
    ]


async def test_fail_report_is_terminal_and_refreshable(sessions, unique: str) -> None:
    report_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="reviewer")
        await ledger.reports.open(
            report_id, kind="verification", run_id=f"v-{unique}", subject="s", subject_key="k"
        )
        assert await ledger.reports.fail(report_id, "no evidence source answered")
        assert not await ledger.reports.fail(report_id, "twice")
        assert not await ledger.reports.complete(report_id)
        assert await ledger.reports.refresh(report_id, run_id=f"v2-{unique}") == "failed"
    assert await _actions(sessions, report_id) == [
        AuditAction.REPORT_OPENED.value,
        AuditAction.REPORT_FAILED.value,
        AuditAction.REPORT_REFRESH_REQUESTED.value,
    ]


@pytest.mark.parametrize(
    ("kind", "field"), [("review", "review_id"), ("verification", "verification_id")]
)
async def test_a_dead_lettered_review_or_verification_fails_its_report(
    sessions, unique: str, kind: str, field: str
) -> None:
    """Every delivery failed (say the corpus tools stayed down): the report reads `failed` with the
    reason, not `running` for ever."""
    import json

    from research_ledger import dead_letters
    from research_ledger.tables import ReportRow
    from research_platform.delivery import DeadLetter

    report_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        await UnitOfWork(session, service="test").reports.open(
            report_id, kind=kind, run_id=f"dl-{unique}", subject="s", subject_key="k"
        )

    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

    parked = Msg(  # a core NATS message: no JetStream position to name it by
        _client=NATS(),
        subject=f"research.{kind}.requested",
        data=json.dumps({field: str(report_id), "topic": "vitamin D"}).encode(),
    )
    letter = DeadLetter.of(
        "reviewer", parked, "transient after 5 deliveries: ToolsUnavailable('corpus tools down')"
    )
    assert letter.report_id == report_id and letter.task_id is None
    await dead_letters.recorder(sessions, "reviewer")(letter)
    async with sessions() as session:
        row = await session.get(ReportRow, report_id)
    assert (
        row.status == "failed" and "dead-lettered" in row.error and "ToolsUnavailable" in row.error
    )
    assert AuditAction.REPORT_FAILED.value in await _actions(sessions, report_id)
