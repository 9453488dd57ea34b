"""The scheduler base against real Postgres: run-lock across replicas, 409, cancel, pause/resume, ticks."""

from __future__ import annotations

import asyncio
import itertools

import nats
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from research_agents import (
    AgentPaused,
    RunContext,
    RunInFlight,
    RunLock,
    Scheduler,
    ScheduleSettings,
)
from research_agents.controls import answer, mount_controls
from research_contracts import ControlReply, ControlRequest, subjects
from research_platform.broker import make_broker
from research_platform.tables import AgentRun
from tests.agents.apps import ask

pytestmark = pytest.mark.integration

MANUAL = ScheduleSettings(enabled=False, control_poll_s=0.05)


class SteppedWork:
    """A run that does `steps` units of work, one per checkpoint, and can be held at will."""

    def __init__(self, steps: int = 1000, step_s: float = 0.01) -> None:
        self.steps, self.step_s = steps, step_s
        self.done = 0
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, ctx: RunContext) -> dict:
        self.started.set()
        for _ in range(self.steps):
            await ctx.checkpoint()
            await self.release.wait()
            await asyncio.sleep(self.step_s)
            self.done += 1
            ctx.bump("steps")
        return {"finished": True}


async def _runs(engine: AsyncEngine, agent: str) -> list[AgentRun]:
    from research_platform.db import session_factory

    async with session_factory(engine)() as session:
        return list(
            await session.scalars(
                select(AgentRun).where(AgentRun.agent == agent).order_by(AgentRun.started_at)
            )
        )


async def test_run_lock_excludes_a_second_replica(
    engine: AsyncEngine, replica_engine: AsyncEngine, unique: str
) -> None:
    first, second = RunLock(engine, unique), RunLock(replica_engine, unique)
    assert await first.acquire()
    assert not await second.acquire()
    await first.release()
    assert await second.acquire()
    await second.release()


async def test_two_replicas_never_run_at_once_and_every_run_is_recorded(
    engine: AsyncEngine, replica_engine: AsyncEngine, unique: str
) -> None:
    work_a, work_b = SteppedWork(steps=5), SteppedWork(steps=5)
    work_a.release.clear()
    replica_a = Scheduler(unique, engine, work_a, MANUAL)
    replica_b = Scheduler(unique, replica_engine, work_b, MANUAL)
    run_id = await replica_a.run_once()
    await asyncio.wait_for(work_a.started.wait(), 5)
    with pytest.raises(RunInFlight):
        await replica_b.run_once()
    assert (await replica_b.status())["state"] == "running"
    work_a.release.set()
    await replica_a.wait_current(10)
    second = await replica_b.run_once()
    await replica_b.wait_current(10)
    runs = await _runs(engine, unique)
    assert [r.id for r in runs] == [run_id, second]
    assert [r.outcome for r in runs] == ["completed", "completed"]
    assert runs[0].counts["steps"] == 5 and runs[0].counts["finished"] is True
    assert runs[0].finished_at is not None and runs[0].finished_at <= runs[1].started_at


async def test_concurrent_run_once_answers_409(
    engine: AsyncEngine, replica_engine: AsyncEngine, unique: str
) -> None:
    work = SteppedWork(steps=3)
    work.release.clear()
    replica_a = Scheduler(unique, engine, work, MANUAL)
    replica_b = Scheduler(unique, replica_engine, SteppedWork(steps=1), MANUAL)
    replies = await asyncio.gather(
        answer(replica_a, "run-once", ControlRequest()),
        answer(replica_b, "run-once", ControlRequest()),
    )
    assert sorted(r.status for r in replies) == [202, 409]
    again = await answer(replica_a, "run-once", ControlRequest())
    assert again.status == 409 and again.state == "running"
    work.release.set()
    await replica_a.wait_current(10)
    await replica_b.wait_current(10)
    waited = await answer(
        replica_b, "run-once", ControlRequest(args={"wait": True, "timeout_s": 10})
    )
    assert waited.status == 200 and waited.detail["run"]["outcome"] == "completed"


async def test_cancel_current_from_another_replica_stops_at_a_safe_point(
    engine: AsyncEngine, replica_engine: AsyncEngine, unique: str
) -> None:
    work = SteppedWork(steps=10_000, step_s=0.005)
    runner = Scheduler(unique, engine, work, MANUAL)
    operator = Scheduler(unique, replica_engine, SteppedWork(), MANUAL)
    idle = await answer(operator, "cancel-current", ControlRequest())
    assert idle.status == 200 and idle.detail["cancelled"] is None
    run_id = await runner.run_once()
    await asyncio.wait_for(work.started.wait(), 5)
    await asyncio.sleep(0.1)
    reply = await answer(operator, "cancel-current", ControlRequest(actor_key_id="k1"))
    assert reply.detail["cancelled"] == str(run_id)
    await runner.wait_current(10)
    (run,) = await _runs(engine, unique)
    assert run.outcome == "cancelled"
    assert 0 < run.counts["steps"] < 10_000
    status = await operator.status()
    assert status["state"] == "idle" and status["last_run"]["outcome"] == "cancelled"
    # the cancel request was consumed: the next run is not cancelled by it
    work2 = SteppedWork(steps=3)
    runner.work = work2
    await runner.run_once()
    await runner.wait_current(10)
    assert (await _runs(engine, unique))[-1].outcome == "completed"


async def test_pause_holds_the_run_and_refuses_new_ones_until_resume(
    engine: AsyncEngine, replica_engine: AsyncEngine, unique: str
) -> None:
    work = SteppedWork(steps=40, step_s=0.01)
    runner = Scheduler(unique, engine, work, MANUAL)
    operator = Scheduler(unique, replica_engine, SteppedWork(), MANUAL)
    await runner.run_once()
    await asyncio.wait_for(work.started.wait(), 5)
    paused = await answer(operator, "pause", ControlRequest())
    assert paused.status == 200 and paused.state == "paused"
    for _ in range(100):  # the run notices the pause at its next safe point
        if runner.suspended:
            break
        await asyncio.sleep(0.05)
    held_at = work.done
    await asyncio.sleep(0.4)
    assert work.done == held_at < 40, "a paused run must not progress"
    status = await answer(operator, "status", ControlRequest())
    assert status.state == "paused" and status.detail["suspended_run"] is True
    refused = await answer(operator, "run-once", ControlRequest())
    assert refused.status == 409 and refused.state == "paused"
    resumed = await answer(operator, "resume", ControlRequest())
    assert resumed.status == 200 and resumed.detail["paused"] is False
    await runner.wait_current(10)
    assert work.done == 40
    (run,) = await _runs(engine, unique)
    assert run.outcome == "completed"


async def test_ticks_of_two_replicas_do_not_multiply_runs(
    engine: AsyncEngine, replica_engine: AsyncEngine, unique: str
) -> None:
    ticking = ScheduleSettings(interval_s=0.6, first_tick_s=0.0, control_poll_s=0.05)
    replicas = [
        Scheduler(unique, engine, SteppedWork(steps=2), ticking),
        Scheduler(unique, replica_engine, SteppedWork(steps=2), ticking),
    ]
    for replica in replicas:
        replica.start()
    status = await replicas[0].status()
    assert status["next_tick"] is not None
    await asyncio.sleep(2.0)
    for replica in replicas:
        await replica.stop()
    runs = await _runs(engine, unique)
    assert 2 <= len(runs) <= 5, [r.started_at for r in runs]
    assert all(r.trigger == "tick" for r in runs)
    finished = [r for r in runs if r.finished_at]
    for earlier, later in itertools.pairwise(finished):
        assert earlier.finished_at is not None and earlier.finished_at <= later.started_at, (
            "two runs overlapped"
        )


async def test_paused_agent_does_not_tick(engine: AsyncEngine, unique: str) -> None:
    scheduler = Scheduler(
        unique, engine, SteppedWork(steps=1), ScheduleSettings(interval_s=0.2, first_tick_s=0.0)
    )
    await scheduler.pause("k")
    with pytest.raises(AgentPaused):
        await scheduler.run_once()
    scheduler.start()
    await asyncio.sleep(0.6)
    await scheduler.stop()
    assert await _runs(engine, unique) == []


async def test_an_operator_verb_over_the_bus_reads_an_empty_body_and_refuses_a_malformed_one(
    engine: AsyncEngine,
    servers,
    nc: nats.NATS,
    unique: str,
) -> None:
    """The admin routes send a `ControlRequest` or nothing; anything else gets a 400 with the
    reason at once, never a timeout."""
    broker = make_broker(servers.nats_url, unique)
    mount_controls(broker, unique, lambda: Scheduler(unique, engine, SteppedWork(steps=1), MANUAL))
    await broker.start()
    try:

        async def ask_pause(body: bytes) -> ControlReply:
            reply = await ask(
                nc, subjects.control_subject(unique, "pause"), body, timeout=10
            )  # the broker just started
            return ControlReply.model_validate_json(reply.data)

        assert (await ask_pause(b"")).state == "paused"
        for malformed in (b'{"args": "wait"}', b"pause now"):
            refused = await ask_pause(malformed)
            assert refused.status == 400 and refused.detail["error"].startswith(
                "invalid control request"
            )
        status = await nc.request(
            subjects.control_subject(unique, "status"), b'{"actor_key_id": "k1"}', timeout=10
        )
        assert ControlReply.model_validate_json(status.data).state == "paused"
    finally:
        await broker.stop()
