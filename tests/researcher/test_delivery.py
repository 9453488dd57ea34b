"""At-least-once delivery on a real nats-server: the same task delivered twice yields one claim
and one `research.claim.pending` event; bad input is dead-lettered with its reason."""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import func, select

from research_contracts import RunResearch, Tier, subjects
from research_ledger.tables import AuditEvent, MemoryClaim
from research_researcher.reshape import claim_id_for
from tests.researcher.conftest import publish_task, wait_for_claims
from tests.researcher.fakes import FakeConnector

pytestmark = pytest.mark.integration


async def _pending_events_for(nc: nats.NATS, claim_id: str, since: datetime) -> int:
    """`research.claim.pending` messages stored in the stream for `claim_id` since `since`."""
    js = nc.jetstream()
    sub = await js.pull_subscribe(
        subjects.CLAIM_PENDING,
        stream=subjects.CLAIMS_STREAM,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_TIME, opt_start_time=since),
    )
    count = 0
    try:
        while True:
            try:
                batch = await sub.fetch(100, timeout=1.0)
            except (TimeoutError, nats.errors.TimeoutError):
                break
            count += sum(1 for m in batch if json.loads(m.data).get("claim_id") == claim_id)
    finally:
        await sub.unsubscribe()
    return count


async def _settled(nc: nats.NATS, durable: str, timeout: float = 30.0) -> None:
    """Wait until every message of `durable` was delivered and acknowledged."""
    js = nc.jetstream()
    for _ in range(int(timeout / 0.1)):
        info = await js.consumer_info(subjects.TASKS_STREAM, durable)
        if info.num_pending == 0 and info.num_ack_pending == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{durable} did not settle in {timeout}s")


async def test_a_task_delivered_twice_yields_one_claim_and_one_event(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str
) -> None:
    since = datetime.now(UTC)
    task = RunResearch(
        question="Does denosumab reduce hip fractures?", entity=f"idem {unique}", tier=Tier.priority
    )
    async with start_researcher(concurrency=2):
        # two deliveries of the same task (different message ids, so JetStream keeps both), worked on at once
        await publish_task(nc, task, msg_id=f"{unique}-a")
        await publish_task(nc, task, msg_id=f"{unique}-b")
        await wait_for_claims(sessions, [task.task_id])
        await _settled(nc, subjects.RESEARCHER_DURABLES["priority"])
        # and a third, after the claim exists: re-announced, never re-created
        await publish_task(nc, task, msg_id=f"{unique}-c")
        await _settled(nc, subjects.RESEARCHER_DURABLES["priority"])

    async with sessions() as session:
        claims = await session.scalar(
            select(func.count()).select_from(MemoryClaim).where(MemoryClaim.task_id == task.task_id)
        )
        proposed = await session.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(
                AuditEvent.task_id == task.task_id, AuditEvent.action == "research.claim.proposed"
            )
        )
    assert claims == 1 and proposed == 1
    assert await _pending_events_for(nc, str(claim_id_for(task.task_id)), since) == 1


async def test_a_malformed_task_is_dead_lettered_with_its_reason(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str
) -> None:
    bad_tier = json.dumps({"question": f"valid question {unique}", "tier": "urgent"}).encode()
    not_json = b"{not json " + unique.encode()
    digests = {hashlib.sha256(body).hexdigest() for body in (bad_tier, not_json)}
    async with start_researcher():
        await nc.jetstream().publish(
            subjects.task_subject("batched"), bad_tier, headers={"content-type": "application/json"}
        )
        await nc.jetstream().publish(
            subjects.task_subject("batched"), not_json, headers={"content-type": "application/json"}
        )
        rows: list[AuditEvent] = []
        for _ in range(100):
            async with sessions() as session:
                rows = list(
                    await session.scalars(
                        select(AuditEvent).where(
                            AuditEvent.action == "consumer.dead_letter",
                            AuditEvent.payload["sha256"].astext.in_(digests),
                        )
                    )
                )
            if len(rows) == 2:
                break
            await asyncio.sleep(0.1)
    assert len(rows) == 2
    assert all(
        row.service == "researcher" and row.payload["reason"].startswith("invalid message")
        for row in rows
    )
    assert any("tier" in row.payload["reason"] for row in rows)
    assert any("not JSON" in row.payload["reason"] for row in rows)
    assert all(
        unique not in json.dumps(row.payload) for row in rows
    )  # the body stays on the dead-letter stream
