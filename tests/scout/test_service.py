"""The scout end to end on real NATS + Postgres: a run asks the connector over request/reply,
stores a snapshot (a `source_list` report version), persists every iteration and judgement and
emits them as run events; a redelivered run is skipped; a schedule fired twice with a changed
source set stores the diff and publishes it on `research.sourcelist.updated`; two replicas
never run one schedule occurrence twice."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from research_agents import RunInFlight, Scheduler, ScheduleSettings
from research_contracts import subjects
from research_contracts.runs import RunDone, VerdictReached
from research_contracts.sourcelists import RequestSourceList, SourceListUpdated
from research_ledger import UnitOfWork
from research_ledger.source_lists import SourceListBook
from research_ledger.tables import SourceListJudgement, SourceListRun, SourceListSchedule
from research_runs import replay
from research_scout.schedules import ScheduleTick
from tests.scout.conftest import fake_connector, relay_on
from tests.scout.hits import VITAMIN_D, paper, recorded

pytestmark = pytest.mark.integration
PROMPT = "Does vitamin D supplementation reduce fracture risk in older adults?"


async def _events(nc, run_id: str) -> list:
    return [event async for _, event in replay(nc.jetstream(), run_id)]


async def _last_update(nc, sessions) -> SourceListUpdated:
    await relay_on(sessions, nc).drain()  # what the runs committed, published
    raw = await nc.jetstream().get_last_msg(
        subjects.SOURCELISTS_STREAM, subjects.SOURCELIST_UPDATED
    )
    return SourceListUpdated.model_validate_json(raw.data)


async def _make_due(sessions, list_id: uuid.UUID) -> None:
    async with sessions() as session, session.begin():
        await session.execute(
            update(SourceListSchedule)
            .where(SourceListSchedule.source_list_id == list_id)
            .values(next_run_at=datetime.now(UTC) - timedelta(seconds=5))
        )


@pytest.mark.usefixtures(
    "shared_dir"
)  # recorded() is read inside a responder: skip before, not time out
async def test_a_run_stores_the_snapshot_trace_and_events(nc, sessions, scout_factory, unique):
    subject = f"test.connector.{unique}"
    async with fake_connector(nc, subject) as connector:
        connector.hits = [*VITAMIN_D, *recorded()]
        scout = scout_factory(subject)
        command = RequestSourceList(
            prompt=PROMPT, num_references=3, detail_level="facts_list", source_type="academic"
        )
        outcome = await scout.handle(command)
        again = await scout.handle(command)
    assert outcome.error is None and outcome.version == 1 and again.skipped
    assert connector.asked[0].sources == [
        "semantic_scholar",
        "crossref",
        "openalex",
        "pubmed",
        "europepmc",
        "arxiv",
        "corpus",
    ]
    sources = outcome.snapshot.source_list.sources
    # the relevance model puts the meta-analysis first; no off-topic recorded hit (Turing test, LLMs) is listed
    assert sources[0].title == VITAMIN_D[0].title and len(sources) <= 3
    assert all("vitamin d" in s.title.lower() for s in sources)
    async with sessions() as session:
        report = await UnitOfWork(session, service="test").reports.get(command.source_list_id)
        version = await UnitOfWork(session, service="test").reports.version(command.source_list_id)
        book = SourceListBook(session, service="test")
        iterations = await book.iterations(command.run_id)
        judgements = await book.judgements(command.run_id)
        (run,) = await book.runs(command.source_list_id)
    assert report.status == "completed" and report.kind == "source_list" and version.version == 1
    assert version.content["source_list"]["run_id"] == command.run_id
    assert (
        run.status == "completed"
        and run.sources == len(sources)
        and run.stop_reason == outcome.stop_reason
    )
    assert [i.iteration for i in iterations] == list(range(1, len(iterations) + 1))
    assert iterations[-1].stop_reason == outcome.stop_reason and iterations[0].query.startswith(
        "vitamin D"
    )
    assert len(judgements) == sum(i.counts["new"] for i in iterations)
    assert all(
        0 <= j.confidence <= 1 and j.rationale and j.label in ("strong", "partial", "irrelevant")
        for j in judgements
    )
    events = await _events(nc, command.run_id)
    verdicts = [e for e in events if isinstance(e, VerdictReached)]
    assert len(verdicts) == len(judgements) and {v.verdict for v in verdicts} <= {
        "strong",
        "partial",
        "irrelevant",
    }
    assert isinstance(events[-1], RunDone) and events[-1].status == "completed"
    assert any(e.type == "reasoning" and "Iteration 1" in e.text for e in events)


async def test_a_schedule_firing_twice_with_a_changed_source_set_publishes_the_diff(
    nc, sessions, scout_factory, unique
):
    subject = f"test.connector.{unique}"
    async with fake_connector(nc, subject) as connector:
        scout = scout_factory(subject)
        daily = paper(
            71,
            "Daily vitamin D and fracture prevention in older adults",
            "In 4,100 adults over 65, daily vitamin D supplementation reduced the risk of non-vertebral "
            "fractures by 20% over three years.",
        )
        connector.hits = [*VITAMIN_D[:2], daily]
        command = RequestSourceList(
            prompt=PROMPT, num_references=5, update_frequency="P1D", workspace=f"ws-{unique}"
        )
        first = await scout.handle(command)
        assert first.version == 1 and first.snapshot.source_list.next_run_at is not None

        connector.hits = [
            VITAMIN_D[0],
            VITAMIN_D[1].model_copy(update={"metadata": {"retracted": True}}),
            paper(
                70,
                "Vitamin D supplementation and fracture risk in older adults revisited",
                "Vitamin D supplementation reduced fracture risk in older adults.",
            ),
        ]
        await _make_due(sessions, command.source_list_id)
        fired = await ScheduleTick(scout).fire_due()
        assert fired["fired"] >= 1
        event = await _last_update(nc, sessions)
        assert (
            event.source_list_id == command.source_list_id
            and event.version == 2
            and event.trigger == "schedule"
        )
        assert [c.title for c in event.diff.new] == [
            "Vitamin D supplementation and fracture risk in older adults revisited"
        ]
        assert [(c.title, c.fields) for c in event.diff.changed] == [
            (VITAMIN_D[1].title, ["retracted"])
        ]
        assert [c.title for c in event.diff.dropped] == [daily.title]

        connector.hits = [VITAMIN_D[0]]
        await _make_due(sessions, command.source_list_id)
        await ScheduleTick(scout).fire_due()
        second = await _last_update(nc, sessions)
        assert (
            second.version == 3
            and len(second.diff.dropped) == 2
            and second.diff.previous_run_id == event.run_id
        )
    async with sessions() as session:
        runs = await SourceListBook(session, service="test").runs(command.source_list_id)
        version = await UnitOfWork(session, service="test").reports.version(command.source_list_id)
    assert sorted(r.trigger for r in runs) == ["request", "schedule", "schedule"]
    assert all(r.status == "completed" for r in runs)
    assert version.diff["dropped"] and version.version == 3


async def test_two_replicas_never_run_one_schedule_twice(
    nc, sessions, engine, scout_factory, unique
):
    subject = f"test.connector.{unique}"
    async with fake_connector(nc, subject) as connector:
        connector.hits = VITAMIN_D
        replicas = [scout_factory(subject), scout_factory(subject)]
        command = RequestSourceList(
            prompt=PROMPT, num_references=2, update_frequency="P2D", workspace=f"ws-{unique}"
        )
        await replicas[0].handle(command)

        await _make_due(sessions, command.source_list_id)
        results = await asyncio.gather(
            *(ScheduleTick(s).fire_due() for s in replicas)
        )  # racing ticks, no run-lock
        assert sum(r["fired"] for r in results) >= 1

        await _make_due(sessions, command.source_list_id)
        schedulers = [
            Scheduler(
                "scout",
                engine,
                ScheduleTick(s).fire_due,
                ScheduleSettings(interval_s=3600, enabled=False),
            )
            for s in replicas
        ]
        outcomes = await asyncio.gather(
            *(s.run_once(trigger="manual") for s in schedulers), return_exceptions=True
        )
        assert (
            sum(isinstance(o, RunInFlight) for o in outcomes)
            + sum(isinstance(o, uuid.UUID) for o in outcomes)
            == 2
        )
        for scheduler in schedulers:
            await scheduler.wait_current(timeout=60)
    async with sessions() as session:
        runs = await session.scalar(
            select(func.count())
            .select_from(SourceListRun)
            .where(SourceListRun.source_list_id == command.source_list_id)
        )
        judged = await session.scalar(
            select(func.count())
            .select_from(SourceListJudgement)
            .where(SourceListJudgement.run_id == command.run_id)
        )
    assert runs == 3  # the request, then one run per due time — never two for the same occurrence
    assert judged > 0
