"""The console signs in by POST or by a single-use code, never by a key in the URL; its cookie is a
server-side session id (HttpOnly, SameSite=Strict, Secure over https — directly or through a
trusted proxy), never the API key; an old raw-key cookie signs its browser out once; behind a
trusted proxy the throttle counts each forwarded client, not the proxy."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_gateway.auth import ApiKeys
from research_gateway.signins import OLD_KEY_COOKIE, SESSION_COOKIE
from research_ledger import UnitOfWork
from research_platform.settings import GatewayAuthSettings
from tests.keys import auth
from tests.security.conftest import Gateway

pytestmark = pytest.mark.integration
API = "/api/research/v1"
FORM = {"content-type": "application/x-www-form-urlencoded"}


async def _key(sessions: async_sessionmaker[AsyncSession]) -> tuple[uuid.UUID, str]:
    async with sessions() as session, session.begin():
        return await ApiKeys(UnitOfWork(session, service="gateway")).issue(
            "reader", "console sign-in"
        )


async def _code(sessions: async_sessionmaker[AsyncSession], key_id: uuid.UUID, ttl: float) -> str:
    async with sessions() as session, session.begin():
        return await UnitOfWork(session, service="gateway").signins.issue_code(key_id, ttl)


async def test_a_key_in_the_url_no_longer_signs_in_and_a_posted_key_opens_a_session(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    _, key = await _key(sessions)
    async with gateway() as (_, client):
        in_url = await client.get("/", params={"key": key})
        assert "set-cookie" not in in_url.headers and 'name="key"' in in_url.text  # the form
        posted = await client.post("/sign-in", content=f"key={key}", headers=FORM)
        assert posted.status_code == 303 and posted.headers["location"] == "/"
        cookie = posted.headers["set-cookie"]
        assert cookie.startswith(f"{SESSION_COOKIE}=") and key not in cookie
        lowered = cookie.lower()
        assert "httponly" in lowered and "samesite=strict" in lowered and "secure" not in lowered
        session_id = cookie.split(";")[0].split("=", 1)[1]
        client.cookies.set(SESSION_COOKIE, session_id)
        assert (await client.get(f"{API}/findings")).status_code == 200  # the session is the key
        assert (await client.post("/sign-out")).status_code == 303
        client.cookies.set(SESSION_COOKIE, session_id)
        assert (await client.get(f"{API}/findings")).status_code == 401  # ended on the server too


async def test_a_sign_in_code_is_spent_on_first_use_and_expires(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    key_id, _ = await _key(sessions)
    code = await _code(sessions, key_id, 300)
    async with gateway() as (_, client):
        first = await client.get("/", params={"code": code})
        assert first.status_code == 303 and SESSION_COOKIE in first.headers["set-cookie"]
        again = await client.get("/", params={"code": code})
        assert again.status_code == 303 and "error=" in again.headers["location"]
        assert "set-cookie" not in again.headers
        stale = await _code(sessions, key_id, 300)
        async with sessions() as session, session.begin():
            await session.execute(
                text("UPDATE console_codes SET expires_at = now() - interval '1 second'")
            )
        expired = await client.get("/", params={"code": stale})
        assert "error=" in expired.headers["location"] and "set-cookie" not in expired.headers


async def test_an_old_raw_key_cookie_signs_its_browser_out_once(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    _, key = await _key(sessions)
    async with gateway() as (_, client):
        client.cookies.set(OLD_KEY_COOKIE, key)
        assert (await client.get(f"{API}/findings")).status_code == 401  # no longer a key
        page = await client.get("/ledger")
        assert 'name="key"' in page.text  # the sign-in form, not the ledger
        assert f'{OLD_KEY_COOKIE}=""' in page.headers["set-cookie"]  # deleted


async def test_behind_a_trusted_proxy_the_cookie_is_secure_and_each_client_is_counted(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    _, key = await _key(sessions)
    proxy = f"10.66.{uuid.uuid4().int % 250}.1"
    settings = GatewayAuthSettings(failed_attempts=3, trusted_proxies=[f"{proxy}/32"])
    https = {"x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7"}
    async with gateway(client=(proxy, 443), gateway_auth=settings) as (_, client):
        posted = await client.post("/sign-in", content=f"key={key}", headers={**FORM, **https})
        assert "secure" in posted.headers["set-cookie"].lower()
        for n in range(5):  # one client behind the proxy keeps failing: it alone is slowed
            await client.get(
                f"{API}/findings", headers={**auth(f"rek_x{n}"), "x-forwarded-for": "203.0.113.8"}
            )
        neighbour = await client.get(
            f"{API}/findings", headers={**auth("rek_y"), "x-forwarded-for": "203.0.113.9"}
        )
        assert neighbour.status_code == 401  # not 429: the proxy's other clients are not locked out
        slowed = await client.get(
            f"{API}/findings", headers={**auth("rek_z"), "x-forwarded-for": "203.0.113.8"}
        )
        assert slowed.status_code == 429
    untrusted = GatewayAuthSettings(failed_attempts=3)
    async with gateway(client=(proxy, 443), gateway_auth=untrusted) as (_, client):
        forged = await client.post("/sign-in", content=f"key={key}", headers={**FORM, **https})
        assert "secure" not in forged.headers["set-cookie"].lower()  # headers of a stranger
