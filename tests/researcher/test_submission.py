"""Idempotent submission over HTTP, against real NATS JetStream + Postgres with the researcher running.

The gateway publishes first (with `Nats-Msg-Id: task-<id>`) and commits second, and the task
id is derived from the caller's key and its `Idempotency-Key`: a repeat is the same task, and a bus failure leaves
no row behind.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from research_gateway.auth import ApiKeys
from research_gateway.main import create_app
from research_ledger import AuditAction, UnitOfWork, task_id_for_key
from research_ledger.tables import AuditEvent, MemoryClaim, ResearchTask
from research_platform.settings import Settings
from tests.researcher.conftest import wait_for_claims
from tests.researcher.fakes import FakeConnector
from tests.teardown import left_within

pytestmark = pytest.mark.integration
API = "/api/research/v1"


@asynccontextmanager
async def gateway(servers, key: dict[str, str]) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
    app = create_app(Settings(nats_url=servers.nats_url, database_url=servers.database_url))
    async with left_within(app.router.lifespan_context(app), "gateway lifespan"):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", timeout=30, headers=key
        ) as client:
            yield client, app


async def _key_id(sessions, headers: dict[str, str]) -> uuid.UUID:
    """The id of the key in `headers`: an `Idempotency-Key` names a task per caller."""
    async with sessions() as session:
        caller = await ApiKeys(UnitOfWork(session, service="gateway")).identify(
            headers["X-API-Key"]
        )
    assert caller is not None
    return caller.key_id


async def _count(sessions, model, *where) -> int:
    async with sessions() as session:
        return await session.scalar(select(func.count()).select_from(model).where(*where))


async def test_the_same_key_twice_is_one_task_and_one_claim(
    servers, start_researcher, connector: FakeConnector, sessions, unique: str, api_keys
) -> None:
    body = {"question": "Does denosumab reduce hip fractures?", "entity": f"key {unique}"}
    headers = {"Idempotency-Key": f"client-{unique}"}
    async with start_researcher(), gateway(servers, api_keys["researcher"]) as (client, _):
        first = await client.post(f"{API}/tasks", json=body, headers=headers)
        second = await client.post(f"{API}/tasks", json=body, headers=headers)
        assert first.status_code == 202 and second.status_code == 200
        task_id = uuid.UUID(first.json()["task_id"])
        owner = await _key_id(sessions, api_keys["researcher"])
        assert (
            second.json()["task_id"]
            == str(task_id)
            == str(task_id_for_key(f"client-{unique}", owner))
        )
        await wait_for_claims(sessions, [task_id])
        third = await client.post(
            f"{API}/tasks", json=body, headers=headers
        )  # after the claim: still the same task
        assert third.status_code == 200 and third.json() == {
            "task_id": str(task_id),
            "status": "claimed",
        }
        other = await client.post(
            f"{API}/tasks", json={**body, "question": "Another question?"}, headers=headers
        )
        assert other.status_code == 409  # a key names one question

    assert await _count(sessions, ResearchTask, ResearchTask.id == task_id) == 1
    assert await _count(sessions, MemoryClaim, MemoryClaim.task_id == task_id) == 1
    assert (
        await _count(
            sessions,
            AuditEvent,
            AuditEvent.task_id == task_id,
            AuditEvent.action == AuditAction.TASK_SUBMITTED.value,
        )
        == 1
    )


async def test_a_client_task_id_is_idempotent_too(servers, sessions, unique: str, api_keys) -> None:
    task_id = uuid.uuid4()
    body = {"question": f"Does {unique} help?", "task_id": str(task_id)}
    async with gateway(servers, api_keys["researcher"]) as (client, _):
        codes = [(await client.post(f"{API}/tasks", json=body)).status_code for _ in range(2)]
    assert codes == [202, 200]
    assert await _count(sessions, ResearchTask, ResearchTask.id == task_id) == 1


async def test_bus_down_at_submit_leaves_no_orphan_row_and_a_retry_succeeds(
    servers, sessions, unique: str, api_keys
) -> None:
    body = {"question": f"Is {unique} safe in pregnancy?"}
    headers = {"Idempotency-Key": f"down-{unique}"}
    task_id = task_id_for_key(f"down-{unique}", await _key_id(sessions, api_keys["researcher"]))
    async with gateway(servers, api_keys["researcher"]) as (client, app):
        await app.state.broker.stop()  # the gateway's NATS connection is gone
        refused = await client.post(f"{API}/tasks", json=body, headers=headers)
        assert refused.status_code == 503
        assert (
            await _count(sessions, ResearchTask, ResearchTask.id == task_id) == 0
        )  # no orphan `queued` row
        assert (await client.get(f"{API}/tasks/{task_id}")).status_code == 404
    async with gateway(servers, api_keys["researcher"]) as (
        client,
        _,
    ):  # the bus is back: the client retries with the same key
        accepted = await client.post(f"{API}/tasks", json=body, headers=headers)
        assert accepted.status_code == 202 and accepted.json()["task_id"] == str(task_id)
        view = (await client.get(f"{API}/tasks/{task_id}")).json()
        assert view["status"] in {"queued", "researching", "claimed"}
    assert await _count(sessions, ResearchTask, ResearchTask.id == task_id) == 1
