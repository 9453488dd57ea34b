"""Every API route needs a key: 401 (no / unknown key) vs 403 (role too low) exact, roles ordered
reader < researcher < admin, failed key checks throttled (429 + Retry-After, the console's sign-in counted too,
in PostgreSQL) without ever refusing a valid key, open mode
only on a loopback bind and announced. Real NATS + Postgres behind the app."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from structlog.testing import capture_logs

from research_gateway.auth import ApiKeys
from research_gateway.hosts import is_loopback
from research_gateway.main import create_app
from research_gateway.throttle import FailedAuthThrottle
from research_ledger import UnitOfWork
from research_ledger.tables import AuditEvent
from research_platform.settings import GatewayAuthSettings, Settings
from tests.keys import api_key, auth
from tests.security.conftest import Gateway

API = "/api/research/v1"
OPEN_PATHS = {"/healthz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}


def _settings(**values: Any) -> Settings:
    return Settings(
        nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x", **values
    )


def _api_routes() -> list[tuple[str, str]]:
    """(method, concrete path) of every operation of the gateway's OpenAPI document, path parameters filled in."""
    routes = []
    for template, item in create_app(_settings()).openapi()["paths"].items():
        if template not in OPEN_PATHS:
            path = re.sub(r"{[^}]+}", str(uuid.uuid4()), template)
            routes += [(method.upper(), path) for method in sorted(item)]
    assert len(routes) > 20, "the document lists every route (tasks, search, ledger, admin, modes)"
    return routes


@pytest.mark.unit
def test_every_operation_documents_401_and_403() -> None:
    paths = create_app(_settings()).openapi()["paths"]
    undocumented = [
        (method, path)
        for path, item in paths.items()
        if path not in OPEN_PATHS
        for method, operation in item.items()
        if not {"401", "403"} <= set(operation["responses"])
    ]
    assert undocumented == []
    assert len(paths) > 10


@pytest.mark.unit
def test_open_mode_is_refused_on_a_network_bind() -> None:
    with pytest.raises(RuntimeError, match="non-loopback"):
        create_app(_settings(gateway_host="0.0.0.0", gateway_auth=GatewayAuthSettings(open=True)))  # noqa: S104 - the bind under test
    create_app(_settings(gateway_host="0.0.0.0"))  # noqa: S104 - closed on a network bind is fine
    create_app(_settings(gateway_host="::1", gateway_auth=GatewayAuthSettings(open=True)))
    assert (
        is_loopback("127.0.0.2")
        and is_loopback("localhost")
        and not is_loopback("gateway.example.org")
    )


@pytest.mark.integration
async def test_throttle_waits_until_the_oldest_failure_leaves_the_window(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    throttle = FailedAuthThrottle(limit=3, window_s=60)
    client, other = f"client:{uuid.uuid4()}", f"client:{uuid.uuid4()}"
    async with sessions() as session, session.begin():
        for _ in range(3):
            assert (
                await throttle.retry_after(UnitOfWork(session, service="gateway"), client) is None
            )
            await throttle.failed(UnitOfWork(session, service="gateway"), client)
    async with sessions() as session, session.begin():
        assert (
            55
            <= (await throttle.retry_after(UnitOfWork(session, service="gateway"), client) or 0)
            <= 60
        )
        assert (
            await throttle.retry_after(UnitOfWork(session, service="gateway"), other) is None
        )  # another client is not affected
        await session.execute(  # an hour later: every failure has left the window
            text("UPDATE auth_failures SET failed_at = failed_at - interval '1 hour'")
        )
        assert await throttle.retry_after(UnitOfWork(session, service="gateway"), client) is None


@pytest.mark.integration
async def test_every_api_route_answers_401_without_a_valid_key(gateway: Gateway) -> None:
    routes = _api_routes()
    async with gateway(gateway_auth=GatewayAuthSettings(failed_attempts=10_000)) as (_, client):
        # (a client address of its own: its hundreds of failures are counted in the shared database)
        for method, path in routes:
            missing = await client.request(method, path)
            assert missing.status_code == 401, (method, path, missing.text)
            assert missing.headers["www-authenticate"] == "Bearer"
            unknown = await client.request(method, path, headers=auth("rek_not-a-key"))
            assert unknown.status_code == 401, (method, path)
        assert (await client.get("/healthz")).status_code == 200  # the probe holds no ledger data


@pytest.mark.integration
async def test_roles_are_ordered_and_403_is_audited(
    gateway: Gateway,
    sessions: async_sessionmaker[AsyncSession],
    api_keys: dict[str, dict[str, str]],
) -> None:
    reader, researcher, admin = api_keys["reader"], api_keys["researcher"], api_keys["admin"]
    async with gateway() as (_, client):
        for headers in (reader, researcher, admin):
            assert (
                await client.get(f"{API}/tasks/{uuid.uuid4()}", headers=headers)
            ).status_code == 404
            assert (await client.get(f"{API}/findings", headers=headers)).status_code == 200
        denied = await client.post(f"{API}/tasks", json={"question": "Is it so?"}, headers=reader)
        assert denied.status_code == 403 and "researcher" in denied.json()["detail"]
        bad_body = await client.post(f"{API}/tasks", json={"question": 3}, headers=researcher)
        assert bad_body.status_code == 422  # the role passed; the body is checked next
        assert (await client.get(f"{API}/librarian/status", headers=researcher)).status_code == 403
        bearer = {"Authorization": "Bearer " + reader["X-API-Key"]}
        assert (await client.get(f"{API}/librarian/status", headers=bearer)).status_code == 403
    async with sessions() as session:
        rows = list(
            await session.scalars(
                select(AuditEvent)
                .where(
                    AuditEvent.action == "research.admin.denied",
                    AuditEvent.payload["path"].astext == f"{API}/tasks",
                )
                .order_by(AuditEvent.id.desc())
                .limit(1)
            )
        )
    assert rows and rows[0].payload["role"] == "reader"
    assert reader["X-API-Key"] not in str(rows[0].payload) + str(rows[0].subject_ids)


@pytest.mark.integration
async def test_failed_key_checks_are_throttled_and_a_valid_key_is_never_locked_out(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    good = auth(await api_key(sessions, "reader"))
    limit = GatewayAuthSettings(failed_attempts=3, failed_window_s=120)
    async with gateway(client=("10.9.8.7", 4000), gateway_auth=limit) as (app, client):
        for n in range(3):
            answer = await client.get(f"{API}/findings", headers=auth(f"rek_guess-{n}"))
            assert answer.status_code == 401 and "retry-after" not in answer.headers
        for n in range(
            50
        ):  # a neighbour behind the same address keeps sending bad keys: slowed down
            throttled = await client.get(f"{API}/findings", headers=auth(f"rek_other-{n}"))
            assert (
                throttled.status_code == 429 and 1 <= int(throttled.headers["retry-after"]) <= 120
            )
            assert "retry in" in throttled.json()["detail"]
        assert (
            await client.get(f"{API}/findings")
        ).status_code == 429  # no key at all: a failure too
        # ...and the user with the valid key, from the same address, is served at once
        assert (await client.get(f"{API}/findings", headers=good)).status_code == 200
        async with sessions() as session:  # other clients are unaffected
            assert (
                await app.state.guard.throttle.retry_after(
                    UnitOfWork(session, service="gateway"), "client:10.9.8.8"
                )
                is None
            )


FORM = {"content-type": "application/x-www-form-urlencoded"}


@pytest.mark.integration
async def test_console_sign_in_is_counted_by_the_same_throttle(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    good = await api_key(sessions, "reader")
    limit = GatewayAuthSettings(failed_attempts=3, failed_window_s=120)
    async with gateway(client=("10.9.8.6", 4000), gateway_auth=limit) as (_, client):
        # a guesser at the console: the code URL `up` prints, then the sign-in form
        for tried in (
            await client.get("/", params={"code": "guess-0"}),
            await client.post("/sign-in", content="key=rek_guess-1", headers=FORM),
            await client.get("/", params={"code": "guess-2"}),
        ):
            assert tried.status_code == 303 and "error=" in tried.headers["location"]
        for slowed in (
            await client.get("/", params={"code": "guess-x"}),
            await client.post("/sign-in", content="key=rek_guess-y", headers=FORM),
            await client.get(f"{API}/findings", headers=auth("rek_guess-z")),
        ):  # one count, console and API
            assert slowed.status_code == 429 and 1 <= int(slowed.headers["retry-after"]) <= 120
        assert (
            "rek_guess"
            not in (await client.post("/sign-in", content="key=rek_guess-w", headers=FORM)).text
        )  # never echoes a key
        signed = await client.post("/sign-in", content=f"key={good}", headers=FORM)
        assert signed.status_code == 303 and signed.headers["location"] == "/"  # at once
        assert "research_console_session" in signed.headers["set-cookie"]


@pytest.mark.integration
async def test_open_mode_answers_without_a_key_and_is_announced(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    with capture_logs() as logs:
        async with gateway(gateway_auth=GatewayAuthSettings(open=True)) as (_, client):
            assert (await client.get(f"{API}/findings")).status_code == 200
            assert (
                await client.get(f"{API}/findings", headers=auth("rek_wrong"))
            ).status_code == 401  # a key is still checked
    assert any("OPEN MODE" in entry["event"] and entry["log_level"] == "warning" for entry in logs)
    async with gateway() as (_, client):  # closed is the default
        assert (await client.get(f"{API}/findings")).status_code == 401


@pytest.mark.integration
async def test_a_revoked_key_is_401(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    async with sessions() as session, session.begin():
        key_id, secret = await ApiKeys(UnitOfWork(session, service="gateway")).issue(
            "admin", "to revoke"
        )
    async with sessions() as session, session.begin():
        await ApiKeys(UnitOfWork(session, service="gateway")).revoke(key_id)
    async with gateway() as (_, client):
        assert (await client.get(f"{API}/findings", headers=auth(secret))).status_code == 401
