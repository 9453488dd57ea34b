"""No verification dies silently (issue 36), through the gateway with the verifier running (real
NATS + Postgres, the crafted corpus): 100 claims — scientific notation, clinicians' questions with
identifiers in them — are all accepted and all reach a result (completed, or failed with a reason,
never `running` for ever); a dead-lettered one reads `failed` with the reason on `GET`."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import httpx
import pytest
from faststream import FastStream

from research_contracts import subjects
from research_gateway.main import create_app
from research_ledger import dead_letters
from research_platform.delivery import DeadLetter
from research_platform.settings import Settings
from tests.keys import api_key, auth
from tests.teardown import left_within
from tests.verifier.conftest import wait_for_report

pytestmark = pytest.mark.integration
API = "/api/research/v1"
CLAIMS = (
    "Ketoplex lowers blood pressure in adults",
    "IFN-γ release assays detect latent tuberculosis in 1,000 health-care workers",
    "β-blockers reduce mortality after myocardial infarction (p < .001)",
    "West Nile virus replication is inhibited by Rsad2 in cortical neurons",
    "BNT162b2 prevents COVID-19 in adolescents (NCT04368728)",
    "Does Priyanka's eGFR of 38 mean apixaban should be halved?",
    "Kowalczyk was admitted 14 Jan 2026: does ketoplex raise potassium?",
    "mr de la fuente-ortega, aged ninety-two, on ketoplex: is it safe?",
)


@pytest.fixture
async def client(servers, sessions, verifier_service: FastStream):
    app = create_app(Settings(nats_url=servers.nats_url, database_url=servers.database_url))
    async with left_within(app.router.lifespan_context(app), "gateway lifespan"):
        # 100 verifications from one key: an admin key, exempt from the per-key quotas (a
        # researcher's is 5 in flight and 120 an hour).
        headers = auth(await api_key(sessions, "admin"))
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://localhost",
            timeout=60,
            headers=headers,
        ) as http:
            yield http


async def test_a_hundred_verifications_all_reach_a_result(
    client: httpx.AsyncClient, sessions
) -> None:
    started = time.monotonic()
    ids: list[uuid.UUID] = []
    for n in range(100):
        response = await client.post(
            f"{API}/verifications", json={"claim": f"{CLAIMS[n % len(CLAIMS)]} (case {n})"}
        )
        assert response.status_code == 202, response.text
        ids.append(uuid.UUID(response.json()["verification_id"]))
    rows = await asyncio.gather(*(wait_for_report(sessions, i, timeout=600) for i in ids))
    for row in rows:
        assert row.status == "completed" or (row.status == "failed" and row.error), (
            row.id,
            row.status,
            row.error,
        )
    views = [(await client.get(f"{API}/verifications/{i}")).json() for i in ids[: len(CLAIMS)]]
    assert all(v["status"] in ("completed", "failed") for v in views)
    assert (
        "Priyanka" not in json.dumps(views)
        and "Kowalczyk" not in json.dumps(views)
        and "fuente" not in json.dumps(views)
    )
    assert time.monotonic() - started < 900


async def test_a_dead_lettered_verification_reads_failed_on_get(
    client: httpx.AsyncClient, sessions
) -> None:
    verification_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        from research_ledger import UnitOfWork

        await UnitOfWork(session, service="test").reports.open(
            verification_id,
            kind="verification",
            run_id=f"vf-{verification_id.hex[:16]}",
            subject="ketoplex lowers blood pressure",
            subject_key="ketoplex",
        )

    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

    parked = Msg(  # a core NATS message: no JetStream position to name it by
        _client=NATS(),
        subject=subjects.VERIFY_REQUESTED,
        data=json.dumps(
            {"verification_id": str(verification_id), "claim": "ketoplex lowers blood pressure"}
        ).encode(),
    )
    letter = DeadLetter.of(
        "verifier", parked, "transient after 5 deliveries: ToolsUnavailable('corpus tools down')"
    )
    await dead_letters.recorder(sessions, "verifier")(letter)
    view = (await client.get(f"{API}/verifications/{verification_id}")).json()
    assert (
        view["status"] == "failed"
        and "dead-lettered" in view["error"]
        and "ToolsUnavailable" in view["error"]
    )
