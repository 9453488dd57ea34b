"""The ledger's findings (`uow.findings`) against real Postgres: 180-day TTL, expired rows invisible,
what a reader browses, batched purge, guarded resolve."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_ledger import Ledger
from research_ledger.findings import Findings, NewFinding, purge_expired
from research_ledger.tables import Finding

pytestmark = pytest.mark.integration


async def _age(sessions: async_sessionmaker[AsyncSession], ids: list[uuid.UUID], days: int) -> None:
    """Pretend the findings were created `days` ago (their TTL moves with them)."""
    async with sessions() as session, session.begin():
        await session.execute(
            update(Finding)
            .where(Finding.id.in_(ids))
            .values(
                created_at=func.now() - timedelta(days=days),
                expires_at=func.now() - timedelta(days=days - 180),
            )
        )


async def test_findings_expire_180_days_after_creation(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    claim = uuid.uuid4()
    async with sessions() as session, session.begin():
        finding_id = await Findings(session, unique).record(
            "broken_provenance", [claim], {"missing": ["x"]}
        )
    async with sessions() as session:
        row = await session.get(Finding, finding_id)
        assert row is not None
        assert abs((row.expires_at - row.created_at) - timedelta(days=180)) < timedelta(seconds=1)


async def test_expired_findings_are_never_returned(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    claim = uuid.uuid4()
    async with sessions() as session, session.begin():
        repo = Findings(session, unique)
        old, fresh = await repo.record_many(
            [NewFinding("eroded", [claim]), NewFinding("eroded", [claim])]
        )
    await _age(sessions, [old], days=181)
    async with sessions() as session, session.begin():
        repo = Findings(session, unique)
        assert await repo.get(old) is None
        assert (await repo.get(fresh)) is not None
        assert [f.finding_id for f in await repo.open_for_claims([claim])] == [fresh]
        assert [f.finding_id for f in await repo.recent()] == [fresh]
        assert await repo.count_since(timedelta(days=365)) == 1
        assert await repo.mark_resolved(old) is False, "an expired finding cannot be resolved"


async def test_a_reader_browses_every_agents_live_findings_newest_first_narrowed_as_asked(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """What `GET /findings` answers: across agents, expired ones never, by agent, kind and
    (`unresolved`) those nobody resolved."""
    claim = uuid.uuid4()
    librarian, correlator = f"librarian-{unique}", f"correlator-{unique}"
    async with sessions() as session, session.begin():  # one transaction each: now() moves on
        eroded, expired = await Findings(session, librarian).record_many(
            [NewFinding("eroded", [claim]), NewFinding("eroded", [claim])]
        )
    async with sessions() as session, session.begin():
        resolved = await Findings(session, librarian).record(f"broken-{unique}", [claim], {})
    async with sessions() as session, session.begin():
        pattern = await Findings(session, correlator).record(f"pattern-{unique}", [claim], {})
    await _age(sessions, [expired], days=181)
    async with sessions() as session, session.begin():
        assert await Findings(session, librarian).mark_resolved(resolved) is True
    async with Ledger(sessions).reading() as uow:
        mine = {eroded, resolved, pattern}
        everyone = [
            f.finding_id for f in await uow.findings.browse(limit=500) if f.finding_id in mine
        ]
        assert everyone == [pattern, resolved, eroded]  # newest first, the expired one never
        by_agent = await uow.findings.browse(agent=librarian)
        assert [f.finding_id for f in by_agent] == [resolved, eroded]
        by_kind = await uow.findings.browse(kind=f"pattern-{unique}")
        assert [(f.finding_id, f.agent) for f in by_kind] == [(pattern, correlator)]
        open_ones = await uow.findings.browse(agent=librarian, unresolved=True)
        assert [f.finding_id for f in open_ones] == [eroded]
        assert by_agent[0].resolved_at is not None and by_agent[0].claim_ids == [claim]


async def test_purge_deletes_expired_findings_in_batches(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    async with sessions() as session, session.begin():
        ids = await Findings(session, unique).record_many(
            [NewFinding("co_occurrence", [uuid.uuid4()]) for _ in range(7)]
        )
    expired, kept = ids[:5], ids[5:]
    await _age(sessions, expired, days=200)
    assert await purge_expired(Ledger(sessions), batch_size=2) >= 5
    async with sessions() as session:
        left = set(await session.scalars(select(Finding.id).where(Finding.id.in_(ids))))
    assert left == set(kept)


async def test_mark_resolved_only_once_and_only_by_the_owner(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    claim = uuid.uuid4()
    async with sessions() as session, session.begin():
        finding_id = await Findings(session, f"{unique}-a").record("approaching_decay", [claim])
    async with sessions() as session, session.begin():
        assert await Findings(session, f"{unique}-b").mark_resolved(finding_id) is False
    async with sessions() as session, session.begin():
        owner = Findings(session, f"{unique}-a")
        assert await owner.mark_resolved(finding_id) is True
        assert await owner.mark_resolved(finding_id) is False
    async with sessions() as session:
        repo = Findings(session, f"{unique}-a")
        view = await repo.get(finding_id)
        assert (
            view is not None and view.resolved_at is not None and view.resolved_by == f"{unique}-a"
        )
        assert await repo.open_for_claims([claim]) == []


async def test_settle_records_resolves_and_audits_in_one_transaction(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    from research_ledger import AuditAction
    from research_ledger.tables import AuditEvent

    claim = uuid.uuid4()
    async with sessions() as session, session.begin():
        mine = await Findings(session, unique).record("approaching_decay", [claim])
        foreign = await Findings(session, f"{unique}-other").record("approaching_decay", [claim])
    async with sessions() as session, session.begin():
        opened, resolved = await Findings(session, unique).settle(
            opened=[NewFinding("broken_provenance", [claim], {"missing_sources": ["x"]})],
            resolve={mine: {"now": "broken_provenance"}, foreign: {"now": "x"}},
            opened_action=AuditAction.LIBRARIAN_FINDING,
            resolved_action=AuditAction.LIBRARIAN_RESOLVED,
            context={"run_id": None},
        )
    assert resolved == [mine], "another agent's finding is never resolved"
    async with sessions() as session:
        repo = Findings(session, unique)
        (new,) = await repo.open_for_claims([claim])
        assert new.finding_id == opened[0] and new.kind == "broken_provenance"
        assert abs((new.expires_at - new.created_at) - timedelta(days=180)) < timedelta(seconds=1)
        audits = {
            a.action: a
            for a in await session.scalars(select(AuditEvent).where(AuditEvent.claim_id == claim))
        }
    assert audits[AuditAction.LIBRARIAN_FINDING].payload == {
        "kind": "broken_provenance",
        "missing_sources": ["x"],
    }
    assert audits[AuditAction.LIBRARIAN_RESOLVED].payload == {
        "finding_id": str(mine),
        "kind": "approaching_decay",
        "now": "broken_provenance",
    }
    assert audits[AuditAction.LIBRARIAN_FINDING].subject_ids == {
        "finding_id": str(opened[0]),
        "run_id": None,
    }


async def test_settle_writes_nothing_when_an_audit_row_is_refused(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """The audit rows go through the ledger's writer in the findings' transaction: a payload the
    catalogue refuses (a resolution without `now`) rolls back the new finding and the resolution."""
    from research_ledger import AuditAction
    from research_ledger.errors import AuditPayloadError
    from research_ledger.tables import AuditEvent

    claim = uuid.uuid4()
    async with sessions() as session, session.begin():
        mine = await Findings(session, unique).record("approaching_decay", [claim])
    with pytest.raises(AuditPayloadError, match=r"research\.librarian\.resolved"):
        async with sessions() as session, session.begin():
            await Findings(session, unique).settle(
                opened=[NewFinding("broken_provenance", [claim], {"missing_sources": ["x"]})],
                resolve={mine: {}},
                opened_action=AuditAction.LIBRARIAN_FINDING,
                resolved_action=AuditAction.LIBRARIAN_RESOLVED,
            )
    async with sessions() as session:
        (still,) = await Findings(session, unique).open_for_claims([claim])
        audits = await session.scalar(
            select(func.count()).select_from(AuditEvent).where(AuditEvent.claim_id == claim)
        )
    assert still.finding_id == mine and still.kind == "approaching_decay" and audits == 0


async def test_settle_audits_a_persons_text_as_a_digest_like_every_audit_row(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """A finding's audit row is written by the ledger's one audit writer, so a person's words in its
    payload (`question`) rest in the audit log only as a digest, as in every other audit row."""
    from research_ledger import AuditAction
    from research_ledger.tables import AuditEvent

    claim = uuid.uuid4()
    words = f"Does metformin help my aunt {unique}?"
    async with sessions() as session, session.begin():
        (opened,), _ = await Findings(session, unique).settle(
            opened=[NewFinding("broken_provenance", [claim], {"question": words})],
            resolve={},
            opened_action=AuditAction.LIBRARIAN_FINDING,
            resolved_action=AuditAction.LIBRARIAN_RESOLVED,
        )
    async with sessions() as session:
        (row,) = await session.scalars(select(AuditEvent).where(AuditEvent.claim_id == claim))
        finding = await Findings(session, unique).get(opened)
    assert row.payload["question"].startswith("hmac:") and words not in str(row.payload)
    assert finding is not None and finding.payload == {"question": words}
