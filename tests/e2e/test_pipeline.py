"""The whole pipeline with every service as a separate process (real NATS JetStream + Postgres)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid

import httpx
import nats
import pytest
from sqlalchemy import func, select

from research_contracts import subjects
from research_engine.stack import Stack
from research_ledger.tables import AuditEvent, CriticVerdictRow, MemoryClaim

pytestmark = pytest.mark.e2e
TERMINAL = {"active", "rejected", "superseded", "critic_quarantine"}
API = "/api/research/v1"


async def _wait_for_claim(client: httpx.AsyncClient, task_id: str, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = (await client.get(f"{API}/tasks/{task_id}")).json()
        claim = view.get("claim")
        if claim and claim["status"] in TERMINAL:
            return view
        await asyncio.sleep(0.3)
    raise AssertionError(f"task {task_id} has no decided claim after {timeout}s: {view}")


async def test_task_over_http_ends_with_a_decided_claim_citing_the_corpus(stack: Stack) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        reply = await client.post(
            f"{API}/tasks", json={"question": "Does vitamin D supplementation prevent fractures?"}
        )
        assert reply.status_code == 202
        task_id = reply.json()["task_id"]
        view = await _wait_for_claim(client, task_id)
        claim = view["claim"]
        assert view["status"] == "claimed"
        assert claim["statement"]
        assert claim["status"] in {"active", "rejected"}
        assert claim["verdict"]["verdict"] in {"promote", "supersede", "reject"}
        assert 0.0 <= claim["verdict"]["score"] <= 1.0 and claim["verdict"]["reasoning"]
        assert claim["model"].startswith("offline")
        for support in claim["supports"]:
            assert (
                support["source_id"].startswith("corpus:") and support["title"] and support["quote"]
            )
        same = (await client.get(f"{API}/claims/{claim['claim_id']}")).json()
        assert same["statement"] == claim["statement"] and same["verdict"] == claim["verdict"]
        assert (await client.get(f"{API}/claims/{uuid.uuid4()}")).status_code == 404


async def test_a_bad_http_body_gets_422_with_the_reason(stack: Stack) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        missing = await client.post(f"{API}/tasks", json={"entity": "x"})
        assert missing.status_code == 422
        assert any(err["loc"][-1] == "question" for err in missing.json()["detail"])
        bad_tier = await client.post(
            f"{API}/tasks", json={"question": "Is it so?", "tier": "urgent"}
        )
        assert bad_tier.status_code == 422 and "tier" in bad_tier.text
        not_json = await client.post(
            f"{API}/tasks", content=b"{oops", headers={"content-type": "application/json"}
        )
        assert not_json.status_code == 422


async def test_malformed_task_on_the_bus_is_dead_lettered_and_the_consumer_keeps_serving(
    stack: Stack, sessions
) -> None:
    marker = uuid.uuid4().hex
    nc = await nats.connect(stack.nats_url)
    try:
        dead = await nc.subscribe(subjects.dead_letter_subject(subjects.task_subject("priority")))
        body = f'{{"question": "{marker}", broken'.encode()
        await nc.jetstream().publish(subjects.task_subject("priority"), body)
        parked = await dead.next_msg(timeout=60)
        assert parked.data == body
        assert parked.headers and parked.headers["x-reason"].startswith("invalid message")
    finally:
        await nc.close()
    digest, rows = hashlib.sha256(body).hexdigest(), []
    for _ in range(100):  # the audit row commits just after the copy is parked
        async with sessions() as session:
            rows = (
                await session.scalars(
                    select(AuditEvent).where(
                        AuditEvent.action == "consumer.dead_letter",
                        AuditEvent.payload["sha256"].astext == digest,
                    )
                )
            ).all()
        if rows:
            break
        await asyncio.sleep(0.1)
    assert [row.service for row in rows] == ["researcher"] and "body" not in rows[0].payload
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        reply = await client.post(
            f"{API}/tasks",
            json={"question": "Is obesity associated with insulin resistance?", "tier": "priority"},
        )
        await _wait_for_claim(client, reply.json()["task_id"])


async def test_kill_9_of_the_critic_with_50_tasks_in_flight_loses_and_duplicates_nothing(
    stack: Stack, sessions
) -> None:
    questions = json.loads((stack_demo_questions()).read_text())
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        task_ids = []
        for n in range(50):
            q = questions[n % len(questions)]["question"]
            reply = await client.post(
                f"{API}/tasks",
                json={
                    "question": f"{q} (run {n})",
                    "entity": f"kill-test-{n % 5}",
                    "tier": "batched",
                },
            )
            assert reply.status_code == 202
            task_ids.append(uuid.UUID(reply.json()["task_id"]))
    critic = stack.process("critic")
    await _wait_until(lambda: _count_claims(sessions, task_ids), lambda n: n >= 5, 600)
    critic.kill()  # SIGKILL: no cleanup, in-flight messages are never acked
    critic.wait()
    await asyncio.sleep(2)
    stack.start_service("critic")
    await _wait_until(lambda: _count_decided(sessions, task_ids), lambda n: n == 50, 1200)
    async with sessions() as session:
        per_task = (
            await session.execute(
                select(MemoryClaim.task_id, func.count())
                .where(MemoryClaim.task_id.in_(task_ids))
                .group_by(MemoryClaim.task_id)
            )
        ).all()
        verdicts = (
            await session.execute(
                select(CriticVerdictRow.claim_id, func.count())
                .join(MemoryClaim, MemoryClaim.id == CriticVerdictRow.claim_id)
                .where(MemoryClaim.task_id.in_(task_ids))
                .group_by(CriticVerdictRow.claim_id)
            )
        ).all()
    assert len(per_task) == 50 and all(
        count == 1 for _, count in per_task
    )  # none lost, none duplicated
    assert len(verdicts) == 50 and all(
        count == 1 for _, count in verdicts
    )  # each decided exactly once


def stack_demo_questions():
    from bench.harness.stack import DEMO_CORPUS

    return DEMO_CORPUS.parent / "questions.json"


async def _count_claims(sessions, task_ids) -> int:
    async with sessions() as session:
        return await session.scalar(
            select(func.count()).select_from(MemoryClaim).where(MemoryClaim.task_id.in_(task_ids))
        )


async def _count_decided(sessions, task_ids) -> int:
    async with sessions() as session:
        return await session.scalar(
            select(func.count())
            .select_from(MemoryClaim)
            .where(MemoryClaim.task_id.in_(task_ids), MemoryClaim.status.in_(TERMINAL))
        )


async def _wait_until(probe, done, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = await probe()
        if done(value):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"condition not reached in {timeout}s (last value {value})")
