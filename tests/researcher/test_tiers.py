"""Tier precedence on a real nats-server: a flood of batched work does not delay an emergency
task, and no batched task starts while the emergency task waits or runs."""

from __future__ import annotations

import time
from datetime import datetime

import nats
import pytest
from sqlalchemy import func, select

from research_contracts import RunResearch, Tier
from research_ledger.tables import AuditEvent, MemoryClaim
from research_researcher import prepare
from tests.researcher.conftest import publish_task, wait_for_claims
from tests.researcher.fakes import FakeConnector

pytestmark = pytest.mark.integration

FLOOD = 30
CONCURRENCY = 2
EMERGENCY_SEARCH_S = (
    1.5  # the emergency task's evidence takes a while: batched work must not start meanwhile
)


async def _started_batched(sessions, task_ids, after: datetime, before: datetime) -> int:
    async with sessions() as session:
        return await session.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.action == "research.task.started",
                AuditEvent.task_id.in_(task_ids),
                AuditEvent.occurred_at > after,
                AuditEvent.occurred_at < before,
            )
        )


async def test_emergency_task_finishes_before_the_batched_backlog_and_blocks_batched_starts(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str
) -> None:
    emergency = RunResearch(
        question=f"Does denosumab reduce vertebral fractures? ({unique})",
        tier=Tier.emergency,
        entity=f"emergency {unique}",
    )
    # `unique` never leaves the process (outbound queries are built by allow-list): match the topic
    emergency_topic = prepare.guard_question(emergency.question, None).topic_query
    connector.delay_for = lambda request: (
        EMERGENCY_SEARCH_S if request.query == emergency_topic else 0.05
    )
    batched = [
        RunResearch(
            question=f"Is denosumab well tolerated in older women (run {n})?",
            tier=Tier.batched,
            entity=f"batched {unique}",
        )
        for n in range(FLOOD)
    ]
    batched_ids = [t.task_id for t in batched]

    async with start_researcher(concurrency=CONCURRENCY):
        for task in batched:
            await publish_task(nc, task)
        await wait_for_claims(
            sessions, batched_ids[:3], timeout=60
        )  # the backlog is being worked on
        async with sessions() as session:
            published_at = await session.scalar(select(func.now()))
        await publish_task(nc, emergency)
        [claim] = await wait_for_claims(sessions, [emergency.task_id], timeout=60)
        async with sessions() as session:
            done_batched = await session.scalar(
                select(func.count())
                .select_from(MemoryClaim)
                .where(MemoryClaim.task_id.in_(batched_ids))
            )
        started_meanwhile = await _started_batched(
            sessions, batched_ids, published_at, claim.created_at
        )
        drain_started = time.monotonic()
        await wait_for_claims(
            sessions, batched_ids, timeout=120
        )  # the rest drains; one claim per task
        drain_s = time.monotonic() - drain_started

    print(
        f"\nbatched done when emergency finished: {done_batched}/{FLOOD}; batched starts while emergency "
        f"waited/ran: {started_meanwhile}; emergency took {(claim.created_at - published_at).total_seconds():.2f}s; "
        f"remaining backlog drained in {drain_s:.2f}s"
    )
    assert done_batched < FLOOD, "the emergency task waited for the whole batched backlog"
    # at most the tasks already past the gate when it was published (one batch) may still start
    assert started_meanwhile <= CONCURRENCY
    emergency_requests = [r for r in connector.requests if r.query == emergency_topic]
    assert len(emergency_requests) == 1
