"""Poison messages on every consumed JetStream subject, against real NATS + Postgres.

500 bodies nobody can process (empty, not JSON, wrong types, NUL bytes, invalid UTF-8, 900 KB
of random bytes) are spread over every subject the researcher and the critic consume. Each must
be parked on the dead-letter stream exactly once, with an audit row that carries its digest and
never its body, without being delivered more than `max_deliver` times; valid tasks published
after them must still end with a claim and a verdict. A task that fails on every delivery is
parked after its last one and reads `failed`, with the reason, in the API.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime

import httpx
import nats
import pytest
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_contracts import RunResearch, Tier, subjects
from research_critic.main import create_app as critic_app
from research_critic.settings import CriticServiceSettings, CriticSettings
from research_gateway.main import create_app as gateway_app
from research_ledger.tables import AuditEvent, CriticVerdictRow, MemoryClaim
from research_platform.settings import LLMSettings, Settings
from research_researcher.main import create_app as researcher_app
from research_researcher.settings import ResearcherServiceSettings, ResearcherSettings
from tests.agents.apps import running
from tests.researcher.conftest import publish_task
from tests.researcher.fakes import FakeConnector

pytestmark = pytest.mark.integration

ACK_WAIT_S = 2.0
MAX_DELIVER = 3
POISON = 500
CONSUMED = {  # every JetStream subject a service consumes → (stream, durable)
    **{
        subjects.task_subject(tier): (subjects.TASKS_STREAM, durable)
        for tier, durable in subjects.RESEARCHER_DURABLES.items()
    },
    subjects.CLAIM_PENDING: (subjects.CLAIMS_STREAM, subjects.CRITIC_PENDING_DURABLE),
    subjects.CLAIM_RECRITIQUE: (subjects.CLAIMS_STREAM, subjects.CRITIC_RECRITIQUE_DURABLE),
}


def poison(n: int) -> tuple[bytes, int]:
    """The n-th body nobody can process, each kind in turn (the 900 KB one now and then), and how
    often it is delivered: once when it is bad input, `MAX_DELIVER` times when it breaks the
    consumer in a way nobody recognised as bad input (a decoder that gives up on deep nesting)."""
    task_id = str(uuid.uuid4())
    kinds: list[Callable[[], bytes]] = [
        lambda: b"",
        f"not json {n}".encode,
        lambda: json.dumps(
            {"question": n, "tier": [n], "claim_id": n, "entity": {}, "reason": None}
        ).encode(),
        lambda: b'{"question": "nul \x00 byte ' + str(n).encode() + b'"}',  # raw NUL: invalid JSON
        # JSON-escaped NUL in otherwise valid commands (a task with an id; unknown claims)
        lambda: json.dumps(
            {
                "task_id": task_id,
                "question": f"Does \u0000 {n} work?",
                "claim_id": task_id,
                "entity": "x\u0000",
                "statement": "y",
                "reason": "eroded\u0000",
            }
        ).encode(),
        lambda: b"\xff\xfe\x00 invalid utf-8 \xc3\x28 " + str(n).encode(),
    ]
    if n % 25 == 0:
        return os.urandom(900 * 1024), 1
    if n % 50 == 1:
        return b"[" * 5000 + str(
            n
        ).encode(), MAX_DELIVER  # nesting deeper than the JSON decoder follows
    return kinds[n % len(kinds)](), 1


class _PoisonSettings(ResearcherServiceSettings, CriticServiceSettings):
    """The researcher's and the critic's groups in one root: this test runs both apps (and the
    gateway) in one process."""


def _settings(servers: Servers) -> _PoisonSettings:
    return _PoisonSettings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        ack_wait_s=ACK_WAIT_S,
        max_deliver=MAX_DELIVER,
        llm=LLMSettings(provider="offline"),
        researcher=ResearcherSettings(connector_timeout_s=3.0, concurrency=2, tier_poll_s=0.05),
        critic=CriticSettings(sla_seconds=60, concurrency=2),
    )


@asynccontextmanager
async def tuned_consumers(js: JetStreamContext) -> AsyncIterator[None]:
    """Durables with this test's small ack_wait/max_deliver; the suite's settings restored after."""
    before: dict[tuple[str, str], ConsumerConfig] = {}
    for stream, durable in CONSUMED.values():
        try:
            info = await js.consumer_info(stream, durable)
        except NotFoundError:
            continue  # the services create it with the test's settings
        before[(stream, durable)] = info.config
        await js.add_consumer(
            stream, config=replace(info.config, ack_wait=ACK_WAIT_S, max_deliver=MAX_DELIVER)
        )
    try:
        yield
    finally:
        suite = Settings()
        for stream, durable in CONSUMED.values():
            try:
                info = await js.consumer_info(stream, durable)
            except NotFoundError:
                continue  # a consumer of a service this test did not start (the critic's, say)
            old = before.get((stream, durable))
            ack_wait, max_deliver = (
                (old.ack_wait, old.max_deliver) if old else (suite.ack_wait_s, suite.max_deliver)
            )
            await js.add_consumer(
                stream, config=replace(info.config, ack_wait=ack_wait, max_deliver=max_deliver)
            )


async def settled(js: JetStreamContext, timeout: float = 120.0) -> None:
    """Every consumed message was delivered and settled (acked or terminated)."""
    deadline = time.monotonic() + timeout
    while True:
        infos = [await js.consumer_info(stream, durable) for stream, durable in CONSUMED.values()]
        if all(i.num_pending == 0 and i.num_ack_pending == 0 for i in infos):
            return
        assert time.monotonic() < deadline, [
            (i.name, i.num_pending, i.num_ack_pending) for i in infos
        ]
        await asyncio.sleep(0.2)


def _headers(msg: Msg) -> dict[str, str]:
    """A dead-letter copy's headers (every copy carries the reason and the original subject)."""
    assert msg.headers is not None, msg
    return msg.headers


async def parked_since(js: JetStreamContext, since: datetime) -> dict[str, Msg]:
    """Messages on the dead-letter stream stored since `since`, by their `Nats-Msg-Id`."""
    sub = await js.pull_subscribe(
        f"{subjects.DEAD_LETTER_PREFIX}.>",
        stream=subjects.DEAD_LETTER_STREAM,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_TIME, opt_start_time=since),
    )
    found: dict[str, Msg] = {}
    try:
        while True:
            try:
                batch = await sub.fetch(200, timeout=1.0)
            except (TimeoutError, nats.errors.TimeoutError):
                return found
            for msg in batch:
                msg_id = (msg.headers or {}).get(subjects.MSG_ID_HEADER, "")
                assert msg_id not in found, f"{msg_id} parked twice"
                found[msg_id] = msg
    finally:
        await sub.unsubscribe()


async def dead_letter_audit(
    sessions: async_sessionmaker[AsyncSession], since: datetime
) -> list[AuditEvent]:
    async with sessions() as session:
        return list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.action == "consumer.dead_letter", AuditEvent.occurred_at >= since
                )
            )
        )


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"{what} after {timeout}s"
        await asyncio.sleep(0.2)


async def test_poison_on_every_consumed_subject_is_parked_once_and_valid_work_still_finishes(
    servers: Servers, nc: nats.NATS, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    js = nc.jetstream()
    settings = _settings(servers)
    researcher, critic = researcher_app(settings), critic_app(settings)
    brokers = [app.broker for app in (researcher, critic) if app.broker is not None]
    consumed = {
        sub.subject.template  # type: ignore[attr-defined]  # a NATS subscriber: the base type has no subject
        for broker in brokers
        for sub in broker.subscribers
        if getattr(sub, "stream", None)
    }
    assert consumed == set(CONSUMED), "a consumed subject is missing from this test"

    connector = FakeConnector()
    await connector.start(nc)
    since = datetime.now(UTC)
    published: dict[
        str, tuple[str, bytes, int]
    ] = {}  # dead-letter id → (subject, body, deliveries)
    tasks = [
        RunResearch(
            question="Does vitamin D reduce fractures?", entity=f"poison {unique} {tier}", tier=tier
        )
        for tier in Tier
    ]
    try:
        async with tuned_consumers(js), AsyncExitStack() as apps:
            await apps.enter_async_context(running(researcher))
            await apps.enter_async_context(running(critic))
            order = list(CONSUMED)
            for n in range(POISON):
                subject = order[n % len(order)]
                body, deliveries = poison(n)
                ack = await js.publish(subject, body)
                published[f"dead-letter-{ack.stream}-{ack.seq}"] = (subject, body, deliveries)
            for task in tasks:
                await publish_task(nc, task, msg_id=f"{unique}-{task.tier.value}")

            async def decided() -> bool:
                async with sessions() as session:
                    claims = list(
                        await session.scalars(
                            select(MemoryClaim).where(
                                MemoryClaim.task_id.in_([t.task_id for t in tasks])
                            )
                        )
                    )
                    verdicts = list(
                        await session.scalars(
                            select(CriticVerdictRow).where(
                                CriticVerdictRow.claim_id.in_([c.id for c in claims])
                            )
                        )
                    )
                return len(claims) == len(tasks) and len({v.claim_id for v in verdicts}) == len(
                    tasks
                )

            await until(decided, "valid tasks published after the poison have no claim and verdict")
            await settled(js)
    finally:
        await connector.stop()

    parked = await parked_since(js, since)
    mine = {msg_id: parked[msg_id] for msg_id in published if msg_id in parked}
    assert len(mine) == POISON, f"{POISON - len(mine)} poison messages were not parked"
    for msg_id, (subject, body, deliveries) in published.items():
        copy = mine[msg_id]
        assert copy.subject == subjects.dead_letter_subject(subject) and copy.data == body
        assert _headers(copy)["x-original-subject"] == subject and _headers(copy)["x-reason"]
        assert int(_headers(copy)["x-deliveries"]) == deliveries <= MAX_DELIVER

    rows = [
        r
        for r in await dead_letter_audit(sessions, since)
        if r.subject_ids.get("dead_letter_id") in published
    ]
    assert sorted(r.subject_ids["dead_letter_id"] for r in rows) == sorted(published)
    for row in rows:
        subject, body, _ = published[row.subject_ids["dead_letter_id"]]
        assert row.payload["sha256"] == hashlib.sha256(body).hexdigest() and row.payload[
            "size"
        ] == len(body)
        assert row.payload["subject"] == subject and row.payload["reason"]
        assert set(row.payload) <= {
            "subject",
            "reason",
            "sha256",
            "size",
            "delivered",
        }  # never the body


async def test_a_task_failing_on_every_delivery_is_parked_after_the_last_and_reads_failed(
    servers: Servers,
    nc: nats.NATS,
    sessions: async_sessionmaker[AsyncSession],
    unique: str,
    api_keys: dict[str, dict[str, str]],
) -> None:
    """No connector answers: every delivery is a transient fault, the last one parks the task."""
    js = nc.jetstream()
    settings = _settings(servers)
    since = datetime.now(UTC)
    gateway = gateway_app(settings)
    async with (
        tuned_consumers(js),
        running(researcher_app(settings)),
        gateway.router.lifespan_context(gateway),
    ):
        transport = httpx.ASGITransport(app=gateway)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://localhost",
            timeout=30,
            headers=api_keys["researcher"],
        ) as client:
            reply = await client.post(
                "/api/research/v1/tasks",
                json={"question": f"Does {unique} help?", "tier": "emergency"},
            )
            assert reply.status_code == 202
            task_id = reply.json()["task_id"]

            async def failed() -> bool:
                return (await client.get(f"/api/research/v1/tasks/{task_id}")).json()[
                    "status"
                ] == "failed"

            await until(failed, "the task never reads failed")
            view = (await client.get(f"/api/research/v1/tasks/{task_id}")).json()
    assert "dead-lettered" in view["error"] and f"after {MAX_DELIVER} deliveries" in view["error"]
    [row] = [r for r in await dead_letter_audit(sessions, since) if r.task_id == uuid.UUID(task_id)]
    assert row.payload["delivered"] == MAX_DELIVER
    [copy] = [
        m
        for m in (await parked_since(js, since)).values()
        if _headers(m)["x-deliveries"] == str(MAX_DELIVER)
        and json.loads(m.data)["task_id"] == task_id
    ]
    assert copy.subject == subjects.dead_letter_subject(subjects.task_subject("emergency"))
