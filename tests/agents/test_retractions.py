"""Retractions over the real servers: one `SourcesRetracted` marks every claim, report and watched
claim citing the works (ledger side, then through the replicator's subscriber), and the
watched-claim dispatcher keeps at most `watched_in_flight` re-verifications unfinished."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_agents import ScheduleSettings
from research_contracts import RecritiqueClaim, SourcesRetracted, subjects
from research_ledger import Ledger
from research_ledger.watched import phase
from research_platform.models import AuditEvent, Finding, ReportRow, ResearchSource, WatchedClaimRow
from research_replicator import retractions, watched
from research_replicator.main import create_app
from research_replicator.settings import ReplicatorServiceSettings, ReplicatorSettings
from research_reports import Reference, Report
from tests.agents.apps import running
from tests.agents.ledger import add_claim, add_sources, support

pytestmark = pytest.mark.integration


async def add_report(
    sessions: async_sessionmaker[AsyncSession],
    *,
    kind: str,
    cites: list[str],
    rests_on: list[uuid.UUID] = (),  # type: ignore[assignment]
    watch: bool = False,
) -> uuid.UUID:
    """A completed report (kind review | verification) whose version cites `cites`."""
    report_id, run_id = uuid.uuid4(), f"run-{uuid.uuid4().hex[:8]}"
    content = Report(
        title=f"a {kind}",
        kind=kind,
        references=[
            Reference(id=n, title=f"paper {s}", paper_id=s) for n, s in enumerate(cites, 1)
        ],
    )
    async with sessions() as session, session.begin():
        ledger = Ledger(session, service="test")
        await ledger.reports.open(
            report_id, kind=kind, run_id=run_id, subject=f"a {kind}", subject_key=kind
        )
        await ledger.reports.save_version(
            report_id,
            run_id=run_id,
            content=content.model_dump(mode="json"),
            markdown="",
            claim_ids=list(rests_on),
        )
        await ledger.reports.complete(report_id)
        if watch:
            await ledger.watched.watch(report_id, f"claim of {report_id}")
    return report_id


async def statuses(
    sessions: async_sessionmaker[AsyncSession], ids: dict[str, uuid.UUID]
) -> dict[str, tuple[str, str | None]]:
    async with sessions() as session:
        rows = {
            r.id: (r.status, r.stale_reason)
            for r in await session.scalars(select(ReportRow).where(ReportRow.id.in_(ids.values())))
        }
    return {name: rows[i] for name, i in ids.items()}


async def test_a_retraction_marks_what_cites_it_once(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    gone, kept = f"doi:10.9/{unique}-gone", f"doi:10.9/{unique}-kept"
    await add_sources(sessions, gone, kept)
    cites_gone = await add_claim(sessions, entity=unique, supports=[support(gone), support(kept)])
    cites_kept = await add_claim(sessions, entity=unique, supports=[support(kept)])
    rejected = await add_claim(sessions, entity=unique, supports=[support(gone)], status="rejected")
    reports = {
        "via_claim": await add_report(sessions, kind="review", cites=[kept], rests_on=[cites_gone]),
        "via_reference": await add_report(
            sessions, kind="review", cites=[kept, gone], rests_on=[cites_kept]
        ),
        "untouched": await add_report(sessions, kind="review", cites=[kept], rests_on=[cites_kept]),
        "watched": await add_report(sessions, kind="verification", cites=[gone], watch=True),
        "watched_kept": await add_report(sessions, kind="verification", cites=[kept], watch=True),
    }
    event = SourcesRetracted(source_ids=[gone], origin="crossref", notice="10.9/notice")
    out = await retractions.propagate(sessions, event)

    assert out.newly_retracted == [gone]
    assert set(out.findings) == {cites_gone}  # active claims only
    reason = f"cited source {gone} retracted"
    assert await statuses(sessions, reports) == {
        "via_claim": ("stale", reason),
        "via_reference": ("stale", reason),
        "untouched": ("completed", None),
        "watched": ("stale", reason),
        "watched_kept": ("completed", None),
    }
    assert out.watched_due == 1
    async with sessions() as session:
        assert (await session.get(ResearchSource, gone)).retracted is True  # type: ignore[union-attr]
        found = list(
            await session.scalars(
                select(Finding).where(Finding.claim_ids.overlap([cites_gone, rejected]))
            )
        )
        assert [(f.kind, f.claim_ids, f.payload["retracted"]) for f in found] == [
            ("retracted_source", [cites_gone], [gone])
        ]
        due = await session.get(WatchedClaimRow, reports["watched"])
        assert due is not None and due.next_due_at <= datetime.now(UTC)
        later = await session.get(WatchedClaimRow, reports["watched_kept"])
        assert later is not None and later.next_due_at > datetime.now(UTC) + timedelta(days=1)
        stale_audits = await session.scalars(
            select(AuditEvent).where(
                AuditEvent.action == "research.report.stale",
                AuditEvent.subject_ids["report_id"].astext.in_(
                    [str(reports[n]) for n in ("via_claim", "via_reference", "watched")]
                ),
            )
        )
        assert sorted(a.payload["reason"] for a in stale_audits) == [reason] * 3

    again = await retractions.propagate(sessions, event)  # a redelivered event changes nothing
    assert (again.newly_retracted, again.findings, again.stale) == ([], {}, [])


async def test_the_replicator_hears_a_retraction_on_the_bus(
    servers: Servers,
    nc: nats.NATS,
    sessions: async_sessionmaker[AsyncSession],
    unique: str,
) -> None:
    gone = f"pmid:{unique}-gone"
    await add_sources(sessions, gone)
    claim = await add_claim(sessions, entity=unique, supports=[support(gone)])
    review = await add_report(sessions, kind="review", cites=[], rests_on=[claim])
    verification = await add_report(sessions, kind="verification", cites=[gone], watch=True)
    js = nc.jetstream()
    recritiques = await js.subscribe(
        subjects.CLAIM_RECRITIQUE, config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    )
    requests = await js.subscribe(
        subjects.VERIFY_REQUESTED, config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    )
    settings = ReplicatorSettings(
        schedule=ScheduleSettings(interval_s=3600, first_tick_s=3600),  # the dispatcher only
        watched_tick_s=0.2,
        watched_in_flight=1000,
    )
    app = create_app(
        ReplicatorServiceSettings(
            nats_url=servers.nats_url, database_url=servers.database_url, replicator=settings
        )
    )
    async with running(app):
        event = SourcesRetracted(source_ids=[gone], origin="pubmed")
        await js.publish(
            subjects.SOURCE_RETRACTED,
            event.model_dump_json().encode(),
            headers={subjects.MSG_ID_HEADER: event.msg_id()},
        )
        ids = {"review": review, "verification": verification}
        for _ in range(100):
            if {s for s, _ in (await statuses(sessions, ids)).values()} == {"stale"}:
                break
            await asyncio.sleep(0.1)
        assert await statuses(sessions, ids) == {
            name: ("stale", f"cited source {gone} retracted") for name in ids
        }
        command = RecritiqueClaim.model_validate_json((await recritiques.next_msg(10)).data)
        assert (command.claim_id, command.reason) == (claim, "retracted_source")
        asked: list[Any] = []
        while str(verification) not in str(asked):  # the dispatcher asks for the re-verification
            asked.append((await requests.next_msg(10)).data)
    await recritiques.unsubscribe()
    await requests.unsubscribe()


class Recorded:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def publish(self, message: Any, headers: dict[str, str]) -> None:
        self.sent.append(message)


async def test_the_dispatcher_keeps_a_cap_on_unfinished_reverifications(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    mine = [
        await add_report(sessions, kind="verification", cites=[f"pmid:{unique}-{n}"], watch=True)
        for n in range(5)
    ]
    async with sessions() as session, session.begin():
        # the other tests' watched claims are not this one's business: push them far away
        await session.execute(
            update(WatchedClaimRow)
            .where(WatchedClaimRow.verification_id.not_in(mine))
            .values(next_due_at=datetime.now(UTC) + timedelta(days=3650), requested_run_id=None)
        )
        await Ledger(session, service="test").watched.make_due(mine)
    publisher = Recorded()
    assert await watched.request_due(publisher, sessions, limit=50, in_flight=2) == 2
    assert await watched.request_due(publisher, sessions, limit=50, in_flight=2) == 0
    first = publisher.sent[0]
    async with sessions() as session, session.begin():
        await Ledger(session, service="test").watched.record_verdict(
            first.verification_id, first.run_id, "SUPPORTED", "HIGH"
        )
    assert await watched.request_due(publisher, sessions, limit=50, in_flight=2) == 1
    assert await watched.request_due(publisher, sessions, limit=50) == 2  # no cap: the rest
    assert {c.verification_id for c in publisher.sent} == set(mine)


async def test_the_database_spreads_watched_claims_as_the_jitter_says(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """`due(spread=…)` computes each claim's phase in SQL; it must be `phase` of Python."""
    mine = [uuid.uuid4() for _ in range(40)]
    due_at = datetime.now(UTC) + timedelta(days=3000)
    async with sessions() as session, session.begin():
        for verification_id in mine:
            await Ledger(session, service="test").reports.open(
                verification_id, kind="verification", run_id="r", subject="c", subject_key="c"
            )
            session.add(
                WatchedClaimRow(
                    verification_id=verification_id,
                    claim=f"claim {unique}",
                    interval_days=10.0,
                    next_due_at=due_at,
                    runs=0,
                )
            )
    async with sessions() as session:
        found = await Ledger(session, service="test").watched.due(
            now=due_at - timedelta(days=5), spread=1.0, limit=10_000
        )
    expected = {v for v in mine if phase(v) >= 0.5}
    assert 5 < len(expected) < 35
    assert {c.verification_id for c in found} & set(mine) == expected
