"""One key cannot exhaust the engine: per-key quotas on the expensive submissions (runs in flight
per kind, submissions per hour, watched claims), 429 with `Retry-After` and the reason past them,
admin keys exempt, admin overrides per key, a slot freed when its run ends or times out, `GET /me`,
and the failed-key throttle shared by every gateway replica (PostgreSQL, not one process's
memory). Real NATS + Postgres behind the app; no reviewer runs, so a review stays in flight."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_gateway.auth import ApiKeys
from research_ledger import UnitOfWork
from research_ledger.tables import KeySubmission
from research_platform.settings import GatewayAuthSettings, GatewayLimitsSettings
from tests.keys import api_key, auth
from tests.security.conftest import Gateway

pytestmark = pytest.mark.integration
API = "/api/research/v1"
TOPIC = "vitamin D supplementation and fracture risk in older adults"
CLAIM = "Vitamin D supplementation reduces fracture risk in older adults"


async def _key(sessions: async_sessionmaker[AsyncSession], role: str) -> tuple[uuid.UUID, str]:
    async with sessions() as session, session.begin():
        return await ApiKeys(UnitOfWork(session, service="gateway")).issue(role, f"quota {role}")


async def _review(client: httpx.AsyncClient, key: str, topic: str = TOPIC) -> httpx.Response:
    return await client.post(f"{API}/reviews", json={"topic": topic}, headers=auth(key))


def _refusals(answers: list[httpx.Response]) -> list[httpx.Response]:
    return [a for a in answers if a.status_code == 429]


async def test_a_burst_of_60_reviews_from_one_key_is_held_to_its_quota_while_another_key_is_served(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    _, burst_key = await _key(sessions, "researcher")
    _, other_key = await _key(sessions, "researcher")
    async with gateway() as (_, client):
        burst = [_review(client, burst_key, f"{TOPIC} {n}") for n in range(60)]
        other = _review(client, other_key, f"{TOPIC} by another researcher")
        *answers, served = await asyncio.gather(*burst, other)
    accepted = [a for a in answers if a.status_code == 202]
    refused = _refusals(answers)
    assert len(accepted) == 5 and len(refused) == 55, [a.status_code for a in answers]
    for answer in refused:
        assert 1 <= int(answer.headers["retry-after"]) <= 3600
        assert "runs_in_flight=5" in answer.json()["detail"]
    assert served.status_code == 202, served.text  # the other key's quota is its own


async def test_an_admin_overrides_a_keys_limits_and_me_shows_limits_and_use(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    key_id, key = await _key(sessions, "researcher")
    _, admin = await _key(sessions, "admin")
    async with gateway() as (_, client):
        refused = await client.put(
            f"{API}/keys/{key_id}/limits", json={"submissions_per_hour": 3}, headers=auth(key)
        )
        assert refused.status_code == 403  # only an admin sets limits
        set_ = await client.put(
            f"{API}/keys/{key_id}/limits",
            json={"runs_in_flight": 100, "submissions_per_hour": 3},
            headers=auth(admin),
        )
        assert set_.status_code == 200 and set_.json()["limits"] == {
            "runs_in_flight": 100,
            "submissions_per_hour": 3,
            "watched_claims": 500,
        }
        answers = [await _review(client, key, f"{TOPIC} {n}") for n in range(4)]
        assert [a.status_code for a in answers] == [202, 202, 202, 429]
        assert "submissions_per_hour=3" in answers[-1].json()["detail"]
        assert 3500 <= int(answers[-1].headers["retry-after"]) <= 3600
        me = (await client.get(f"{API}/me", headers=auth(key))).json()
        assert me["role"] == "researcher" and me["key_id"] == str(key_id)
        assert me["limits"]["submissions_per_hour"] == 3
        assert me["use"]["submissions_last_hour"] == 3 and me["use"]["in_flight"]["review"] == 3
        assert me["workspaces"] == ["default"]
        admin_me = (await client.get(f"{API}/me", headers=auth(admin))).json()
        assert admin_me["exempt"] is True and admin_me["limits"] is None


async def test_admin_keys_are_exempt(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    _, admin = await _key(sessions, "admin")
    async with gateway() as (_, client):
        answers = await asyncio.gather(*[_review(client, admin, f"{TOPIC} {n}") for n in range(8)])
    assert [a.status_code for a in answers] == [202] * 8


async def test_a_slot_frees_when_its_run_fails_or_times_out(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    key_id, key = await _key(sessions, "researcher")
    _, admin = await _key(sessions, "admin")
    async with gateway() as (_, client):
        await client.put(
            f"{API}/keys/{key_id}/limits", json={"runs_in_flight": 1}, headers=auth(admin)
        )
        first = await _review(client, key, f"{TOPIC} first")
        assert first.status_code == 202
        assert (await _review(client, key, f"{TOPIC} second")).status_code == 429
        async with sessions() as session, session.begin():
            await UnitOfWork(session, service="test").reports.fail(
                uuid.UUID(first.json()["review_id"]), "the reviewer gave up"
            )
        assert (await _review(client, key, f"{TOPIC} third")).status_code == 202
    hour = GatewayLimitsSettings(runs_in_flight=1, run_timeout_s=3600.0)
    other_id, other = await _key(sessions, "researcher")
    async with gateway(gateway_limits=hour) as (_, client):
        assert (await _review(client, other, f"{TOPIC} slow one")).status_code == 202
        assert (await _review(client, other, f"{TOPIC} too soon")).status_code == 429
        # the slow run's slot is older than the run timeout (no sleep: its submission is aged)
        async with sessions() as session, session.begin():
            await session.execute(
                update(KeySubmission)
                .where(KeySubmission.key_id == other_id)
                .values(submitted_at=func.now() - timedelta(seconds=3601))
            )
        assert (await _review(client, other, f"{TOPIC} after the timeout")).status_code == 202


async def test_watched_claims_are_capped_per_key(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    _, key = await _key(sessions, "researcher")
    capped = GatewayLimitsSettings(watched_claims=2)
    async with gateway(gateway_limits=capped) as (_, client):

        async def verify(n: int, watch: bool) -> httpx.Response:
            body: dict[str, Any] = {"claim": f"{CLAIM} ({n})", "watch": watch}
            return await client.post(f"{API}/verifications", json=body, headers=auth(key))

        watched = [await verify(n, True) for n in range(3)]
        assert [a.status_code for a in watched] == [202, 202, 429]
        assert "watched_claims=2" in watched[-1].json()["detail"]
        assert (await verify(9, False)).status_code == 202  # an unwatched one is not capped so


async def test_failed_key_checks_are_counted_across_gateway_replicas(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    limit = GatewayAuthSettings(failed_attempts=4, failed_window_s=120)
    client_address = (f"10.77.{uuid.uuid4().int % 250}.9", 4000)
    good = auth(await api_key(sessions, "reader"))
    async with (
        gateway(client=client_address, gateway_auth=limit) as (_, first),
        gateway(client=client_address, gateway_auth=limit) as (_, second),
    ):
        for n in range(2):
            assert (
                await first.get(f"{API}/findings", headers=auth(f"rek_a-{n}"))
            ).status_code == 401
            assert (
                await second.get(f"{API}/findings", headers=auth(f"rek_b-{n}"))
            ).status_code == 401
        slowed = await second.get(f"{API}/findings", headers=auth("rek_c"))
        assert slowed.status_code == 429 and int(slowed.headers["retry-after"]) >= 1
        assert (await first.get(f"{API}/findings", headers=good)).status_code == 200
