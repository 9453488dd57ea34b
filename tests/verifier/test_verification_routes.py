"""The verifications API through the gateway (in-process, real NATS + Postgres, the verifier on a
crafted corpus): bad input → 422 with the reason; submit → 202 {verification_id, run_id} → the
verdict; watch=true has the verifier enter the claim into the watched claims, once; unknown id → 404."""

from __future__ import annotations

import uuid

import httpx
import pytest
from faststream import FastStream
from sqlalchemy import select

from research_gateway.main import create_app
from research_ledger import AuditAction
from research_ledger.tables import AuditEvent
from research_ledger.watched import VerdictHistoryRow, WatchedClaimRow, WatchedClaims
from research_platform.settings import Settings
from tests.keys import api_key, auth
from tests.teardown import left_within
from tests.verifier.conftest import CraftedCorpus, wait_for_report

pytestmark = pytest.mark.integration
API = "/api/research/v1"


@pytest.fixture
async def client(servers, sessions, verifier_service: FastStream):
    app = create_app(Settings(nats_url=servers.nats_url, database_url=servers.database_url))
    async with left_within(app.router.lifespan_context(app), "gateway lifespan"):
        transport = httpx.ASGITransport(app=app)
        headers = auth(await api_key(sessions, "researcher"))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", timeout=60, headers=headers
        ) as http:
            yield http


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"claim": ""}, "at least 3 characters"),
        ({"claim": "   ...   "}, "claim must state a finding in words"),
        ({"claim": "x" * 10_000}, "at most 2000 characters"),
        ({"claim": "statins cause myopathy", "sources": ["corpus", "myspace"]}, "corpus"),
        ({"claim": "statins cause\x00 myopathy"}, "NUL"),
    ],
)
async def test_bad_input_is_422_with_a_reason(
    client: httpx.AsyncClient, body: dict, reason: str
) -> None:
    response = await client.post(f"{API}/verifications", json=body)
    assert response.status_code == 422, response.text
    assert reason in response.text


async def test_submit_then_read_the_verdict(
    client: httpx.AsyncClient, sessions, crafted: CraftedCorpus
) -> None:
    response = await client.post(
        f"{API}/verifications",
        json={"claim": "Ketoplex lowers blood pressure in adults", "watch": True},
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    verification_id = uuid.UUID(accepted["verification_id"])
    assert accepted["run_id"].startswith("vf-")
    await wait_for_report(sessions, verification_id)
    view = (await client.get(f"{API}/verifications/{verification_id}")).json()
    assert (
        view["status"] == "completed"
        and view["verdict"] == "INSUFFICIENT EVIDENCE"
        and view["confidence"] == "LOW"
    )
    assert view["watch"] is not None and view["history"][0]["verdict"] == "INSUFFICIENT EVIDENCE"
    assert "Verdict: INSUFFICIENT EVIDENCE · Confidence: LOW" in view["markdown"]
    missing = await client.get(f"{API}/verifications/{uuid.uuid4()}")
    assert missing.status_code == 404


async def test_a_watched_verification_is_entered_once_by_the_verifier(
    client: httpx.AsyncClient, sessions, crafted: CraftedCorpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One writer of a watched claim: the gateway publishes the command, the verifier enters the
    claim once; after the run there is one watched row, one verdict and one completion audit row."""
    entered: list[uuid.UUID] = []
    watch = WatchedClaims.watch

    async def counted(
        self: WatchedClaims, verification_id: uuid.UUID, claim: str, **kw: float
    ) -> bool:
        entered.append(verification_id)
        return await watch(self, verification_id, claim, **kw)

    monkeypatch.setattr(WatchedClaims, "watch", counted)
    response = await client.post(
        f"{API}/verifications",
        json={"claim": "Ketoplex lowers blood pressure in older adults", "watch": True},
    )
    assert response.status_code == 202, response.text
    verification_id = uuid.UUID(response.json()["verification_id"])
    await wait_for_report(sessions, verification_id)
    async with sessions() as session:
        watched = list(
            await session.scalars(
                select(WatchedClaimRow).where(WatchedClaimRow.verification_id == verification_id)
            )
        )
        verdicts = list(
            await session.scalars(
                select(VerdictHistoryRow).where(
                    VerdictHistoryRow.verification_id == verification_id
                )
            )
        )
        completed = list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.claim_id == verification_id,
                    AuditEvent.action == AuditAction.VERIFICATION_COMPLETED,
                )
            )
        )
    assert entered.count(verification_id) == 1, entered
    assert len(watched) == 1 and watched[0].runs == 1
    assert len(verdicts) == 1 and len(completed) == 1
