"""Admin routes of the gateway against real NATS + Postgres: 401/403 on every route, verbs forwarded to
the running agents, HTTP status mirrors the agent's reply, every action audited with the key id."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_agents import ScheduleSettings
from research_contracts import subjects
from research_critic.main import create_app as create_critic
from research_critic.settings import CriticServiceSettings
from research_gateway.auth import ApiKeys
from research_gateway.main import create_app
from research_ledger import UnitOfWork
from research_ledger.tables import AuditEvent
from research_librarian.main import create_app as create_librarian
from research_librarian.settings import LibrarianServiceSettings, LibrarianSettings
from research_platform.settings import GatewayAuthSettings, LLMSettings, Settings
from tests.agents.apps import running
from tests.teardown import left_within

pytestmark = pytest.mark.integration

API = "/api/research/v1"
ROUTES = [
    ("GET" if verb == "status" else "POST", f"{API}/{agent}/{verb}")
    for agent in subjects.PERIODIC_AGENTS
    for verb in subjects.CONTROL_VERBS
] + [("POST", f"{API}/critic/quarantine/drain")]


@pytest.fixture
async def gateway(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    # this test refuses 32 keys from one client: beyond the failed-attempt limit (tests/security covers it)
    lenient = GatewayAuthSettings(failed_attempts=1000)
    app: FastAPI = create_app(
        Settings(nats_url=servers.nats_url, database_url=servers.database_url, gateway_auth=lenient)
    )
    async with left_within(app.router.lifespan_context(app), "gateway lifespan"):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", timeout=30
        ) as client:
            yield client


@pytest.fixture
async def keys(sessions: async_sessionmaker[AsyncSession]) -> dict[str, tuple[str, str]]:
    """role → (key id, key)."""
    issued = {}
    async with sessions() as session, session.begin():
        store = ApiKeys(UnitOfWork(session, service="gateway"))
        for role in ("admin", "researcher", "reader"):
            key_id, secret = await store.issue(role, name=f"test {role}")
            issued[role] = (str(key_id), secret)
    return issued


@pytest.mark.unit
def test_every_admin_verb_is_published_in_openapi() -> None:
    app = create_app(Settings(nats_url="nats://unused", database_url="postgresql://unused/x"))
    published = {
        (method.upper(), path) for path, item in app.openapi()["paths"].items() for method in item
    }
    assert set(ROUTES) <= published


async def test_401_without_a_valid_key_and_403_for_other_roles(
    gateway: httpx.AsyncClient,
    keys: dict[str, tuple[str, str]],
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    for method, path in ROUTES:
        assert (await gateway.request(method, path)).status_code == 401, path
        bad = await gateway.request(method, path, headers={"X-API-Key": "rek_not-a-key"})
        assert bad.status_code == 401, path
        for role in ("researcher", "reader"):
            denied = await gateway.request(method, path, headers={"X-API-Key": keys[role][1]})
            assert denied.status_code == 403, (role, path)
            bearer = await gateway.request(
                method, path, headers={"Authorization": f"Bearer {keys[role][1]}"}
            )
            assert bearer.status_code == 403, (role, path)
    async with sessions() as session:
        denials = list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.action == "research.admin.denied",
                    AuditEvent.subject_ids["key_id"].astext == keys["reader"][0],
                )
            )
        )
    assert len(denials) == 2 * len(ROUTES)


async def test_revoked_key_is_refused(
    gateway: httpx.AsyncClient, sessions: async_sessionmaker[AsyncSession]
) -> None:
    async with sessions() as session, session.begin():
        key_id, secret = await ApiKeys(UnitOfWork(session, service="gateway")).issue(
            "admin", "to revoke"
        )
    async with sessions() as session, session.begin():
        assert await ApiKeys(UnitOfWork(session, service="gateway")).revoke(key_id) is True
        assert (
            await ApiKeys(UnitOfWork(session, service="gateway")).revoke(uuid.UUID(str(key_id)))
            is False
        )
    assert (
        await gateway.get(f"{API}/librarian/status", headers={"X-API-Key": secret})
    ).status_code == 401


async def test_admin_verbs_reach_the_agent_and_are_audited(
    servers: Servers,
    gateway: httpx.AsyncClient,
    keys: dict[str, tuple[str, str]],
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    key_id, secret = keys["admin"]
    auth = {"X-API-Key": secret}
    # no critic runs yet: 503, still audited; with the critic running the drain answers 200
    assert (await gateway.post(f"{API}/critic/quarantine/drain", headers=auth)).status_code == 503
    critic = create_critic(
        CriticServiceSettings(
            nats_url=servers.nats_url,
            database_url=servers.database_url,
            llm=LLMSettings(provider="offline"),
        )
    )
    async with running(critic):
        drained = await gateway.post(
            f"{API}/critic/quarantine/drain", headers=auth, json={"claim_ids": [str(uuid.uuid4())]}
        )
        assert drained.status_code == 200 and drained.json()["detail"] == {
            "drained": [],
            "count": 0,
        }
    librarian = create_librarian(
        LibrarianServiceSettings(
            nats_url=servers.nats_url,
            database_url=servers.database_url,
            librarian=LibrarianSettings(
                schedule=ScheduleSettings(enabled=False), batches_per_run=0
            ),
        )
    )
    async with running(librarian):
        status = await gateway.get(f"{API}/librarian/status", headers=auth)
        assert status.status_code == 200 and status.json()["state"] in {"idle", "paused"}
        assert (await gateway.post(f"{API}/librarian/pause", headers=auth)).json()[
            "state"
        ] == "paused"
        refused = await gateway.post(f"{API}/librarian/run-once", headers=auth)
        assert refused.status_code == 409
        assert (await gateway.post(f"{API}/librarian/resume", headers=auth)).status_code == 200
        done = await gateway.post(
            f"{API}/librarian/run-once", headers=auth, json={"wait": True, "timeout_s": 60}
        )
        assert done.status_code == 200 and done.json()["detail"]["run"]["outcome"] == "completed"
        started = await gateway.post(f"{API}/librarian/run-once", headers=auth)
        assert started.status_code == 202 and started.json()["detail"]["run_id"]
        cancel = await gateway.post(f"{API}/librarian/cancel-current", headers=auth)
        assert cancel.status_code == 200
    gone = await gateway.get(f"{API}/correlator/status", headers=auth)
    assert gone.status_code == 503, "no correlator runs in this test"
    async with sessions() as session:
        rows = list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.action == "research.admin.control",
                    AuditEvent.subject_ids["key_id"].astext == key_id,
                )
            )
        )
    audited = [(r.subject_ids["subject"], r.payload["status"]) for r in rows]
    assert ("research.control.librarian.pause", 200) in audited
    assert ("research.control.librarian.run-once", 409) in audited
    assert ("research.control.correlator.status", 503) in audited
    assert ("research.control.critic.drain", 503) in audited and (
        "research.control.critic.drain",
        200,
    ) in audited
    assert len(rows) == 10
    assert secret not in json.dumps([[r.subject_ids, r.payload] for r in rows]), (
        "the key itself is never audited"
    )
