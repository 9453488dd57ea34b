"""The periodic agents as separate OS processes: they answer their control verbs, and two librarian
replicas ticking every second never run at the same time (the advisory run-lock across processes)."""

from __future__ import annotations

import asyncio
import functools
import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import nats
import pytest
from sqlalchemy import select

from bench.harness.servers import Servers
from research_contracts import ControlReply, subjects
from research_engine.stack import Stack
from research_platform.db import create_engine, session_factory
from research_platform.tables import AgentRun

pytestmark = pytest.mark.e2e

T = TypeVar("T")


def _in_thread(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine on its own loop (the session loop of pytest-asyncio may be running)."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def _run() -> None:
        try:
            box.append(asyncio.run(work()))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)

    thread = threading.Thread(target=_run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return box[0]


async def _status(url: str, agent: str) -> ControlReply:
    nc = await nats.connect(url)
    try:
        reply = await nc.request(subjects.control_subject(agent, "status"), b"{}", timeout=10)
        return ControlReply.model_validate_json(reply.data)
    finally:
        await nc.close()


async def _librarian_runs(database_url: str, since: float) -> list[AgentRun]:
    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as session:
            rows = await session.scalars(
                select(AgentRun)
                .where(AgentRun.agent == "librarian", AgentRun.trigger == "tick")
                .order_by(AgentRun.started_at)
            )
            return [r for r in rows if r.started_at.timestamp() >= since]
    finally:
        await engine.dispose()


def test_agents_run_as_processes_and_replicas_share_the_run_lock(
    servers: Servers, tmp_path: Path
) -> None:
    stack = Stack(
        tmp_path,
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        services=("correlator", "replicator", "librarian"),
        extra_env={
            "LIBRARIAN__SCHEDULE__INTERVAL_S": "1",
            "LIBRARIAN__SCHEDULE__FIRST_TICK_S": "0",
            "LIBRARIAN__BATCHES_PER_RUN": "0",
            "CORRELATOR__SCHEDULE__ENABLED": "false",
            "REPLICATOR__SCHEDULE__ENABLED": "false",
        },
    )
    started = time.time()
    stack.start_servers()
    stack.start_services()
    replica = subprocess.Popen(
        [sys.executable, "-m", "research_librarian"],
        env=stack.service_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        replies: dict[str, ControlReply] = {}
        while len(replies) < 3:
            assert time.monotonic() < deadline, f"agents did not answer: {sorted(replies)}"
            for agent in subjects.PERIODIC_AGENTS:
                if agent not in replies:
                    try:
                        replies[agent] = _in_thread(
                            functools.partial(_status, servers.nats_url, agent)
                        )
                    except Exception:  # noqa: BLE001 - not serving yet: ask again
                        time.sleep(0.5)
        assert all(r.status == 200 for r in replies.values())
        assert replies["correlator"].detail["next_tick"] is None, "ticks disabled by configuration"
        while len(_in_thread(lambda: _librarian_runs(servers.database_url, started))) < 4:
            assert time.monotonic() < deadline, "the librarian did not tick"
            time.sleep(0.5)
        assert replica.poll() is None, "the second replica is still running"
    finally:
        replica.terminate()
        replica.wait(15)
        stack.stop()
    runs = _in_thread(lambda: _librarian_runs(servers.database_url, started))
    finished = [r for r in runs if r.finished_at is not None]
    assert len(finished) >= 4 and all(r.outcome in {"completed", "interrupted"} for r in finished)
    for earlier, later in itertools.pairwise(finished):
        assert earlier.finished_at is not None and earlier.finished_at <= later.started_at, (
            "two replicas ran at the same time"
        )
