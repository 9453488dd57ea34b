"""The reviews API through the gateway (in-process, real NATS + Postgres, the real connector and
reviewer services): bad input → 422 with the reason; submit → trace (SSE, resumed with
Last-Event-ID) → report; exports read back by their libraries; a finding's claim superseded →
the review stale (audit row + run event) → refresh → version 2 with its diff."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import bibtexparser
import httpx
import pytest
import rispy
from faststream import FastStream
from nats.js import JetStreamContext
from sqlalchemy import select

from research_contracts import ClaimStatus, CriticVerdict, Support, Verdict, subjects
from research_gateway.main import create_app
from research_ledger import ClaimProposal, UnitOfWork
from research_ledger.tables import AuditEvent, MemoryClaim
from research_platform.settings import Settings
from research_runs import replay
from tests.keys import api_key, auth
from tests.reviewer.conftest import TOPIC, wait_for_report
from tests.runs.test_sse import Frame, frames
from tests.teardown import left_within

pytestmark = pytest.mark.integration
API = "/api/research/v1"


@pytest.fixture
async def client(servers, sessions, reviewer_service: FastStream):
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
        ({"topic": ""}, "at least 3 characters"),
        ({"topic": "   ...   "}, "topic must contain words"),
        ({"topic": "x" * 10_000}, "at most 500 characters"),
        (
            {"topic": "statins and myopathy", "sources": ["corpus", "myspace"]},
            '"sources", 1',
        ),  # the field, never the value
        ({"topic": "statins and myopathy", "max_iterations": 3}, "less than or equal to 2"),
    ],
)
async def test_bad_input_is_a_422_with_the_reason(
    client: httpx.AsyncClient, body: dict, reason: str
) -> None:
    response = await client.post(f"{API}/reviews", json=body)
    assert response.status_code == 422
    assert reason in json.dumps(response.json())


async def _sse(
    client: httpx.AsyncClient, run_id: str, last_event_id: str | None = None
) -> list[Frame]:
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    async with client.stream("GET", f"{API}/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        return [frame async for frame in frames(response)]


async def test_review_lifecycle_through_the_gateway(
    client: httpx.AsyncClient, sessions, js: JetStreamContext, nc
) -> None:
    accepted = await client.post(f"{API}/reviews", json={"topic": TOPIC, "max_iterations": 2})
    assert accepted.status_code == 202, accepted.text
    review_id, run_id = uuid.UUID(accepted.json()["review_id"]), accepted.json()["run_id"]
    assert (await wait_for_report(sessions, review_id)).status == "completed"

    view = (await client.get(f"{API}/reviews/{review_id}")).json()
    assert (
        view["status"] == "completed"
        and view["verdict"] in ("PASS", "REVISION_NEEDED")
        and view["version"] == 1
    )
    assert view["citation_check"]["unknown_ids"] == [] and view["claims"]
    assert view["review"]["text"].startswith(f"VERDICT: {view['verdict']}")

    # the trace through the gateway's SSE route; a reconnect after the 5th event loses and repeats nothing
    everything = await _sse(client, run_id)
    assert everything[0].event == "agent_start" and everything[-1].event == "done"
    resumed = await _sse(client, run_id, everything[4].id)
    assert [f.id for f in resumed] == [f.id for f in everything[5:]]

    # exports read back by their own libraries
    bib = (await client.get(f"{API}/reviews/{review_id}/export", params={"format": "bib"})).text
    ris = (await client.get(f"{API}/reviews/{review_id}/export", params={"format": "ris"})).text
    csl = (
        await client.get(f"{API}/reviews/{review_id}/export", params={"format": "csljson"})
    ).json()
    pdf = (await client.get(f"{API}/reviews/{review_id}/export", params={"format": "pdf"})).content
    markdown = (await client.get(f"{API}/reviews/{review_id}/export", params={"format": "md"})).text
    references = len(view["report"]["references"])
    assert (
        len(bibtexparser.parse_string(bib).entries)
        == references
        == len(rispy.loads(ris))
        == len(csl)
    )
    assert pdf.startswith(b"%PDF") and "## 7. References" in markdown
    assert (
        await client.get(f"{API}/reviews/{review_id}/export", params={"format": "docx"})
    ).status_code == 422

    # the critic promotes a finding's claim, then a better claim supersedes it: the review goes stale
    target = uuid.UUID(view["claims"][0]["claim_id"])
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="critic")
        claim = await session.get(MemoryClaim, target)
        await ledger.verdicts.decide(
            target,
            CriticVerdict(verdict=Verdict.promote, score=0.9, reasoning="ok", model="t"),
            {c.id for c in await ledger.verdicts.active_of_entity(claim.entity, besides=target)},
        )
        newer = ClaimProposal(
            claim_id=uuid.uuid4(),
            task_id=None,
            entity=claim.entity,
            question=claim.question,
            statement=claim.statement + " (updated)",
            confidence=0.9,
            supports=[Support(source_id="corpus:1", quote="updated")],
            dropped_supports=0,
            model="t",
            decay_at=datetime.now(UTC) + timedelta(days=30),
        )
        await ledger.claims.propose(newer, None, [])
        active = {
            c.id
            for c in await ledger.verdicts.active_of_entity(claim.entity, besides=newer.claim_id)
        }
        decided = await ledger.verdicts.decide(
            newer.claim_id,
            CriticVerdict(
                verdict=Verdict.supersede,
                score=0.95,
                reasoning="better",
                supersedes=[target],
                model="t",
            ),
            active,
        )
    assert decided is not None and decided.status is ClaimStatus.active
    await js.publish(subjects.CLAIM_DECIDED, decided.model_dump_json().encode())
    stale = await wait_for_report(sessions, review_id, status=("stale",), timeout=60)
    assert stale.stale_reason == "claim superseded"
    async with sessions() as session:
        audit = await session.scalar(
            select(AuditEvent).where(
                AuditEvent.action == "research.report.stale",
                AuditEvent.subject_ids["report_id"].astext == str(review_id),
            )
        )
    assert audit is not None and audit.claim_id == target
    last = [e async for _, e in replay(js, run_id)][-2:]
    assert (
        last[0].type == "verdict"
        and last[0].verdict == "STALE"
        and last[0].details["claim_id"] == str(target)
    )

    # refresh: a new run, version 2 and its diff; the superseded finding gets a fresh claim
    refreshed = await client.post(f"{API}/reviews/{review_id}/refresh")
    assert refreshed.status_code == 202 and refreshed.json()["run_id"] != run_id
    assert (
        await client.post(f"{API}/reviews/{review_id}/refresh")
    ).status_code == 409  # one run at a time
    assert (await wait_for_report(sessions, review_id)).status == "completed"
    versions = (await client.get(f"{API}/reviews/{review_id}/versions")).json()
    assert [v["version"] for v in versions] == [1, 2] and versions[0]["diff"] is None
    assert versions[1]["diff"]["old_version"] == 1 and versions[1]["diff"]["new_version"] == 2
    again = (await client.get(f"{API}/reviews/{review_id}")).json()
    assert again["version"] == 2 and target not in {
        uuid.UUID(c["claim_id"]) for c in again["claims"]
    }
    assert (await client.get(f"{API}/reviews/{uuid.uuid4()}")).status_code == 404
