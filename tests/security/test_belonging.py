"""Workspaces and tasks belong to someone: a workspace nobody declared gets the `default`
workspace's limits (or a 404 when workspaces must be declared), a researcher key names only the
workspaces it is bound to, a task records the key that submitted it, and an `Idempotency-Key`
is scoped to its caller (the same key from two callers is two tasks, neither learns of the other)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_gateway.auth import ApiKeys
from research_ledger import UnitOfWork
from research_ledger.source_limits import DEFAULT_WORKSPACE, LimitsBook, WorkspaceLimits
from research_ledger.tables import ResearchTask
from research_platform.settings import GatewayLimitsSettings
from tests.keys import auth
from tests.security.conftest import Gateway

pytestmark = pytest.mark.integration
API = "/api/research/v1"
PROMPT = "Does vitamin D supplementation reduce fracture risk in older adults?"
QUESTION = "Does vitamin D supplementation reduce fracture risk in older adults?"


async def _key(sessions: async_sessionmaker[AsyncSession], role: str) -> tuple[uuid.UUID, str]:
    async with sessions() as session, session.begin():
        return await ApiKeys(UnitOfWork(session, service="gateway")).issue(
            role, f"belonging {role}"
        )


@pytest.fixture
async def capped_default(sessions: async_sessionmaker[AsyncSession]) -> AsyncIterator[None]:
    """`default` capped as the finding's admin did (5 references, corpus only), restored after."""
    async with sessions() as session, session.begin():
        before = await LimitsBook(session).of(DEFAULT_WORKSPACE)
        capped = WorkspaceLimits(max_references=5, allowed_apis=["corpus"], max_scheduled_lists=0)
        await LimitsBook(session).store(DEFAULT_WORKSPACE, capped)
    try:
        yield
    finally:
        async with sessions() as session, session.begin():
            await LimitsBook(session).store(DEFAULT_WORKSPACE, before)


async def _list(client: httpx.AsyncClient, key: str, workspace: str) -> httpx.Response:
    body: dict[str, Any] = {"prompt": PROMPT, "num_references": 40, "workspace": workspace}
    return await client.post(f"{API}/source-lists", json=body, headers=auth(key))


async def test_a_workspace_nobody_declared_is_held_to_the_default_workspaces_limits(
    gateway: Gateway,
    sessions: async_sessionmaker[AsyncSession],
    capped_default: None,
    unique: str,
) -> None:
    key_id, researcher = await _key(sessions, "researcher")
    _, admin = await _key(sessions, "admin")
    fresh = f"fresh-{unique}"
    async with gateway() as (_, client):
        refused = await _list(client, researcher, fresh)
        assert refused.status_code == 403 and fresh in refused.json()["detail"]
        bound = await client.put(
            f"{API}/keys/{key_id}/workspaces",
            json={"workspaces": ["default", fresh]},
            headers=auth(admin),
        )
        assert bound.status_code == 200 and bound.json()["workspaces"] == ["default", fresh]
        accepted = await _list(client, researcher, fresh)
        assert accepted.status_code == 202, accepted.text
        request = accepted.json()["request"]
        assert request["num_references"] == 5  # the default workspace's cap, not the seed's 50
        assert (await _list(client, admin, f"any-{unique}")).status_code == 202  # admins: any
    declared_only = GatewayLimitsSettings(declared_workspaces_only=True)
    async with gateway(gateway_limits=declared_only) as (_, client):
        missing = await _list(client, researcher, fresh)
        assert missing.status_code == 404 and "no workspace" in missing.json()["detail"]
        assert (await _list(client, researcher, "default")).status_code == 202


async def test_a_task_records_its_owner_and_an_idempotency_key_is_scoped_to_its_caller(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    first_id, first = await _key(sessions, "researcher")
    second_id, second = await _key(sessions, "researcher")
    shared = {"Idempotency-Key": f"MRN-{unique}"}
    async with gateway() as (_, client):
        mine = await client.post(
            f"{API}/tasks", json={"question": QUESTION}, headers={**auth(first), **shared}
        )
        again = await client.post(
            f"{API}/tasks", json={"question": QUESTION}, headers={**auth(first), **shared}
        )
        theirs = await client.post(
            f"{API}/tasks",
            json={"question": "Does aspirin prevent stroke?"},
            headers={**auth(second), **shared},
        )
        taken = await client.post(
            f"{API}/tasks",
            json={"question": QUESTION, "task_id": mine.json()["task_id"]},
            headers=auth(second),
        )
    assert mine.status_code == 202 and again.status_code == 200
    assert again.json()["task_id"] == mine.json()["task_id"]
    assert theirs.status_code == 202 and theirs.json()["task_id"] != mine.json()["task_id"]
    assert taken.status_code == 409 and QUESTION not in taken.text
    async with sessions() as session:
        owners = dict(
            (
                await session.execute(
                    select(ResearchTask.id, ResearchTask.owner_key_id).where(
                        ResearchTask.id.in_(
                            [uuid.UUID(mine.json()["task_id"]), uuid.UUID(theirs.json()["task_id"])]
                        )
                    )
                )
            ).all()
        )
    assert owners == {
        uuid.UUID(mine.json()["task_id"]): first_id,
        uuid.UUID(theirs.json()["task_id"]): second_id,
    }
