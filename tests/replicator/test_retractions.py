"""Retractions over the real servers: one `SourcesRetracted` marks every claim, report and watched
claim citing the works (ledger side, then through the replicator's subscriber), the watched-claim
dispatcher keeps at most `watched_in_flight` re-verifications unfinished, and the re-critiques a
wave asks for reach the critic at most `recritique_in_flight` unjudged at a time, each once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import nats
import nats.errors
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_agents import ScheduleSettings
from research_contracts import CriticVerdict, RecritiqueClaim, SourcesRetracted, Verdict, subjects
from research_contracts.verifications import RequestVerification
from research_ledger import Ledger, UnitOfWork
from research_ledger.tables import (
    AuditEvent,
    Finding,
    HeldRecritique,
    ReportRow,
    ResearchSource,
    WatchedClaimRow,
)
from research_ledger.watched import phase
from research_replicator import recritiques, retractions, watched
from research_replicator.main import create_app
from research_replicator.settings import ReplicatorServiceSettings, ReplicatorSettings
from research_reports import Reference, Report
from tests.agents.apps import running
from tests.agents.ledger import add_claim, add_sources, outbox_mark, staged, support

pytestmark = pytest.mark.integration


async def add_report(
    sessions: async_sessionmaker[AsyncSession],
    *,
    kind: str,
    cites: list[str],
    rests_on: Sequence[uuid.UUID] = (),
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
        ledger = UnitOfWork(session, service="test")
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
    out = await retractions.propagate(Ledger(sessions), event)

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
        source = await session.get(ResearchSource, gone)
        assert source is not None and source.retracted is True
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

    again = await retractions.propagate(
        Ledger(sessions), event
    )  # a redelivered event changes nothing
    assert (again.newly_retracted, again.findings, again.stale) == ([], {}, [])
    async with sessions() as session:
        held = list(
            await session.scalars(
                select(HeldRecritique).where(HeldRecritique.claim_id.in_([cites_gone, rejected]))
            )
        )
    assert [(h.claim_id, h.finding_id, h.requested_at) for h in held] == [
        (cites_gone, out.findings[cites_gone], None)
    ]


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
    await settle_all_held(sessions)
    js = nc.jetstream()
    recritique_bus = await js.subscribe(
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
        command = RecritiqueClaim.model_validate_json((await recritique_bus.next_msg(10)).data)
        assert (command.claim_id, command.reason) == (claim, "retracted_source")
        asked: list[Any] = []
        while str(verification) not in str(asked):  # the dispatcher asks for the re-verification
            asked.append((await requests.next_msg(10)).data)
    await recritique_bus.unsubscribe()
    await requests.unsubscribe()


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
        await UnitOfWork(session, service="test").watched.make_due(mine)
    mark, ledger = await outbox_mark(sessions), Ledger(sessions)

    async def sent() -> list[RequestVerification]:
        rows = await staged(sessions, mark, subjects.VERIFY_REQUESTED)
        return [RequestVerification.model_validate_json(r.body) for r in rows]

    assert await watched.request_due(ledger, limit=50, in_flight=2) == 2
    assert await watched.request_due(ledger, limit=50, in_flight=2) == 0
    first = (await sent())[0]
    assert first.run_id is not None  # the replicator names the run it asked for
    async with sessions() as session, session.begin():
        await UnitOfWork(session, service="test").watched.record_verdict(
            first.verification_id, first.run_id, "SUPPORTED", "HIGH"
        )
    assert await watched.request_due(ledger, limit=50, in_flight=2) == 1
    assert await watched.request_due(ledger, limit=50) == 2  # no cap: the rest
    assert {c.verification_id for c in await sent()} == set(mine)
    assert {r.msg_id for r in await staged(sessions, mark, subjects.VERIFY_REQUESTED)} == {
        f"verify-{c.verification_id}-{c.run_id}" for c in await sent()
    }


async def test_the_database_spreads_watched_claims_as_the_jitter_says(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """`due(spread=…)` computes each claim's phase in SQL; it must be `phase` of Python."""
    mine = [uuid.uuid4() for _ in range(40)]
    due_at = datetime.now(UTC) + timedelta(days=3000)
    async with sessions() as session, session.begin():
        for verification_id in mine:
            await UnitOfWork(session, service="test").reports.open(
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
        found = await UnitOfWork(session, service="test").watched.due(
            now=due_at - timedelta(days=5), spread=1.0, limit=10_000
        )
    expected = {v for v in mine if phase(v) >= 0.5}
    assert 5 < len(expected) < 35
    assert {c.verification_id for c in found} & set(mine) == expected


async def settle_all_held(sessions: async_sessionmaker[AsyncSession]) -> None:
    """The other tests' held re-critiques are not this one's business: settle them all, so that
    only this test's count against the cap."""
    async with sessions() as session, session.begin():
        await session.execute(
            update(HeldRecritique)
            .where(HeldRecritique.settled_at.is_(None))
            .values(
                requested_at=func.coalesce(HeldRecritique.requested_at, func.now()),
                settled_at=func.now(),
            )
        )


async def judge(
    sessions: async_sessionmaker[AsyncSession], command: RecritiqueClaim, verdict: Verdict
) -> None:
    """What the critic writes when it has judged a re-critique (`Ledger.verdicts.reconsider`)."""
    async with sessions() as session, session.begin():
        await UnitOfWork(session, service="critic").verdicts.reconsider(
            command, CriticVerdict(verdict=verdict, score=0.5, reasoning="judged again"), set()
        )


async def test_a_wave_of_recritiques_is_held_and_released_a_few_at_a_time(
    nc: nats.NATS, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    gone = f"doi:10.9/{unique}-wave"
    await add_sources(sessions, gone)
    claims = [
        await add_claim(sessions, entity=f"{unique}-{n}", supports=[support(gone)])
        for n in range(7)
    ]
    await settle_all_held(sessions)
    mark, ledger = await outbox_mark(sessions), Ledger(sessions)
    event = SourcesRetracted(source_ids=[gone], origin="crossref")

    async def sent() -> list[RecritiqueClaim]:  # what the critic hears, after the commits
        rows = await staged(sessions, mark, subjects.CLAIM_RECRITIQUE)
        return [RecritiqueClaim.model_validate_json(r.body) for r in rows]

    out = await retractions.handle(ledger, nc.jetstream(), event, in_flight=3)

    assert set(out.findings) == set(claims)
    assert len(await sent()) == 3, "the first three only: the rest wait in the ledger"
    assert await recritiques.release(ledger, in_flight=3) == 0, "none judged yet"
    assert (await retractions.propagate(ledger, event)).findings == {}  # redelivered: no more
    first, second, *_ = await sent()
    await judge(sessions, first, Verdict.promote)  # kept: its audit row settles it
    await judge(sessions, second, Verdict.reject)  # withdrawn
    assert await recritiques.release(ledger, in_flight=3) == 2
    while len(await sent()) < len(claims):
        for command in (await sent())[-2:]:
            await judge(sessions, command, Verdict.promote)
        assert await recritiques.release(ledger, in_flight=3) > 0

    commands = await sent()
    assert sorted(c.claim_id for c in commands) == sorted(claims)
    assert {c.claim_id: c.finding_id for c in commands} == out.findings  # each exactly once
    assert [r.msg_id for r in await staged(sessions, mark, subjects.CLAIM_RECRITIQUE)] == [
        f"recritique-{c.finding_id}" for c in commands
    ]
    assert {c.reason for c in commands} == {"retracted_source"}


async def test_held_recritiques_survive_a_restart_and_reach_the_critic_once_each(
    servers: Servers,
    nc: nats.NATS,
    sessions: async_sessionmaker[AsyncSession],
    unique: str,
) -> None:
    gone = f"doi:10.9/{unique}-restart"
    await add_sources(sessions, gone)
    claims = {
        await add_claim(sessions, entity=f"{unique}-{n}", supports=[support(gone)])
        for n in range(5)
    }
    await settle_all_held(sessions)
    js = nc.jetstream()
    bus = await js.subscribe(
        subjects.CLAIM_RECRITIQUE, config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    )
    received: list[RecritiqueClaim] = []

    async def receive(count: int, timeout: float = 10.0) -> None:
        while len(received) < count:
            command = RecritiqueClaim.model_validate_json((await bus.next_msg(timeout)).data)
            if command.claim_id in claims:
                received.append(command)

    def replicator() -> Any:
        settings = ReplicatorSettings(
            schedule=ScheduleSettings(enabled=False),  # the release runs without the schedule
            recritique_in_flight=2,
            recritique_tick_s=0.1,
        )
        return create_app(
            ReplicatorServiceSettings(
                nats_url=servers.nats_url, database_url=servers.database_url, replicator=settings
            )
        )

    async with running(replicator()):
        event = SourcesRetracted(source_ids=[gone], origin="retraction_watch")
        await js.publish(
            subjects.SOURCE_RETRACTED,
            event.model_dump_json().encode(),
            headers={subjects.MSG_ID_HEADER: event.msg_id()},
        )
        await receive(2)
        with pytest.raises(nats.errors.TimeoutError):  # ten ticks, none judged: nothing more
            await receive(3, timeout=1.0)
    for command in received:  # judged while the replicator is down
        await judge(sessions, command, Verdict.promote)
    async with running(replicator()):  # a new process: the other three are still in the ledger
        while len(received) < len(claims):
            before = len(received)
            await receive(min(before + 2, len(claims)))
            for command in received[before:]:
                await judge(sessions, command, Verdict.promote)
        with pytest.raises(nats.errors.TimeoutError):  # each finding once, none again
            await receive(len(claims) + 1, timeout=1.0)
    await bus.unsubscribe()

    assert sorted(c.claim_id for c in received) == sorted(claims)
    assert len({c.finding_id for c in received}) == len(claims)
