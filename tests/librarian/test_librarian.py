"""The librarian on crafted claims: precedence, the resolved path, idempotent runs, cursor, NATS controls."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import nats
import pytest
from sqlalchemy import any_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_agents import Scheduler, ScheduleSettings
from research_contracts import ControlReply, subjects
from research_ledger import Ledger
from research_ledger.tables import AuditEvent, Finding, MemoryClaim
from research_librarian.main import Librarian, create_app
from research_librarian.settings import LibrarianServiceSettings, LibrarianSettings
from research_platform.db import session_factory, without_transactions
from tests.agents.apps import running
from tests.agents.ledger import add_claim, add_sources, support

pytestmark = pytest.mark.integration

FULL_PASS = LibrarianSettings(
    schedule=ScheduleSettings(enabled=False), batches_per_run=0, batch_size=100
)


async def _run(engine: AsyncEngine, settings: LibrarianSettings = FULL_PASS) -> dict:
    ledger = Ledger(
        session_factory(engine), read_sessions=session_factory(without_transactions(engine))
    )
    scheduler = Scheduler("librarian", engine, Librarian(ledger, settings).run, settings.schedule)
    await scheduler.run_once()
    await scheduler.wait_current(60)
    return (await scheduler.status())["last_run"]


async def _findings(sessions: async_sessionmaker[AsyncSession], claim_id) -> list[Finding]:
    async with sessions() as session:
        rows = await session.scalars(
            select(Finding)
            .where(Finding.agent == "librarian", claim_id == any_(Finding.claim_ids))
            .order_by(Finding.created_at)
        )
        return list(rows)


async def _audits(
    sessions: async_sessionmaker[AsyncSession], claim_id, action: str
) -> list[AuditEvent]:
    async with sessions() as session:
        rows = await session.scalars(
            select(AuditEvent).where(AuditEvent.claim_id == claim_id, AuditEvent.action == action)
        )
        return list(rows)


async def test_precedence_and_the_resolved_path(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    known, gone = f"doi:{unique}/known", f"doi:{unique}/gone"
    await add_sources(sessions, known)
    soon = datetime.now(UTC) + timedelta(days=10)
    later = datetime.now(UTC) + timedelta(days=400)
    broken_and_decaying = await add_claim(
        sessions, entity=unique, supports=[support(known), support(gone)], decay_at=soon
    )
    decaying = await add_claim(sessions, entity=unique, supports=[support(known)], decay_at=soon)
    healthy = await add_claim(sessions, entity=unique, supports=[support(known)], decay_at=later)
    unsupported = await add_claim(sessions, entity=unique, supports=[])
    pending = await add_claim(sessions, entity=unique, supports=[support(gone)], status="pending")

    run = await _run(engine)
    assert run["outcome"] == "completed" and run["counts"]["claims"] >= 4

    (f,) = await _findings(sessions, broken_and_decaying)
    assert f.kind == "broken_provenance" and f.payload["missing_sources"] == [gone]
    (f,) = await _findings(sessions, decaying)
    assert f.kind == "approaching_decay" and 9 < f.payload["days_left"] <= 10
    (f,) = await _findings(sessions, unsupported)
    assert f.kind == "broken_provenance"
    assert await _findings(sessions, healthy) == []
    assert await _findings(sessions, pending) == [], "only active claims are validated"
    assert len(await _audits(sessions, broken_and_decaying, "research.librarian.finding")) == 1

    # a second run with nothing changed records nothing new
    await _run(engine)
    assert len(await _findings(sessions, broken_and_decaying)) == 1
    assert len(await _findings(sessions, decaying)) == 1

    # the missing source appears: provenance is healthy again, decay remains
    await add_sources(sessions, gone)
    async with sessions() as session, session.begin():
        await session.execute(
            update(MemoryClaim).where(MemoryClaim.id == decaying).values(decay_at=later)
        )
    await _run(engine)
    old, new = await _findings(sessions, broken_and_decaying)
    assert (
        old.kind == "broken_provenance"
        and old.resolved_at is not None
        and old.resolved_by == "librarian"
    )
    assert new.kind == "approaching_decay" and new.resolved_at is None
    (resolved,) = await _audits(sessions, broken_and_decaying, "research.librarian.resolved")
    assert resolved.payload == {
        "finding_id": str(old.id),
        "kind": "broken_provenance",
        "now": "approaching_decay",
    }
    (f,) = await _findings(sessions, decaying)
    assert f.resolved_at is not None
    (resolved,) = await _audits(sessions, decaying, "research.librarian.resolved")
    assert resolved.payload["now"] == "healthy"


async def test_runs_walk_the_ledger_in_batches_and_resume_from_the_cursor(
    engine: AsyncEngine, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    claims = [await add_claim(sessions, entity=unique, supports=[]) for _ in range(5)]
    small = LibrarianSettings(
        schedule=ScheduleSettings(enabled=False), batch_size=2, batches_per_run=1
    )
    first = await _run(engine, small)
    assert (
        first["counts"]["batches"] == 1
        and first["counts"]["claims"] == 2
        and first["counts"]["cursor"]
    )
    second = await _run(engine, small)
    assert second["counts"]["cursor"] > first["counts"]["cursor"], (
        "the next run continues after the last one"
    )
    await _run(engine)  # a full pass reaches every claim
    for claim_id in claims:
        assert [f.kind for f in await _findings(sessions, claim_id)] == ["broken_provenance"]


async def test_controls_over_nats(
    servers: Servers, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    claim = await add_claim(sessions, entity=unique, supports=[support(f"pmid:{unique}")])
    app = create_app(
        LibrarianServiceSettings(
            nats_url=servers.nats_url, database_url=servers.database_url, librarian=FULL_PASS
        )
    )
    async with running(app):
        nc = await nats.connect(servers.nats_url)
        try:
            status = ControlReply.model_validate_json(
                (
                    await nc.request(
                        subjects.control_subject("librarian", "status"), b"{}", timeout=10
                    )
                ).data
            )
            assert status.status == 200 and status.state in {"idle", "running"}
            reply = await nc.request(
                subjects.control_subject("librarian", "run-once"),
                json.dumps(
                    {"actor_key_id": "test", "args": {"wait": True, "timeout_s": 60}}
                ).encode(),
                timeout=70,
            )
            done = ControlReply.model_validate_json(reply.data)
            assert done.status == 200 and done.detail["run"]["outcome"] == "completed"
            (f,) = await _findings(sessions, claim)
            assert f.kind == "broken_provenance"
            status = ControlReply.model_validate_json(
                (
                    await nc.request(
                        subjects.control_subject("librarian", "status"), b"", timeout=10
                    )
                ).data
            )
            assert (
                status.detail["findings_24h"] >= 1
                and status.detail["last_run"]["run_id"] == done.detail["run_id"]
            )
        finally:
            await nc.close()


class _CountingProvenance:
    """Stands in for `uow.provenance` (and `apply`) in a walk: each apply opens as many findings as it is given."""

    def __init__(self) -> None:
        self.analyzed_after: list[int] = []
        self.written = 0

    async def apply(self, changes, run_id=None):
        self.written += len(changes)
        return len(changes), 0

    async def analyze_findings(self) -> None:
        self.analyzed_after.append(self.written)

    async def prepare_walk(self) -> None:
        return None


async def test_a_walk_analyzes_findings_each_time_its_own_have_doubled() -> None:
    from research_librarian.repository import Walk

    provenance = _CountingProvenance()
    walk = Walk(provenance, provenance.apply, write_every=200)  # type: ignore[arg-type]  # a stand-in that counts writes and analyses
    for _ in range(10):
        walk.pending = ["finding"] * 200  # type: ignore[assignment]  # the stand-in writes nothing: 200 placeholders are a full batch
        await walk.flush()
    # The first flush gives the planner statistics (an empty table's plan scans it per claim);
    # after that only doubling re-plans, so a pass of many flushes analyzes a handful of times.
    assert provenance.analyzed_after == [200, 400, 800, 1600]
    assert walk.opened == 2000
