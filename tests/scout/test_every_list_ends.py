"""No source list dies silently (issue 36), on real NATS + Postgres through the gateway:

- 200 lists — among them ids whose UUID reads like a phone ("…-0242-4616-…"), a date ("…9dec…")
  or a record number (an all-digit first group), which the ledger's check once refused after
  the command was already on the bus — are all accepted and all built: the ledger reads
  person-typed fields only, never ids;
- a check that refuses answers 422 before anything is published (one answer, no command on the bus);
- a list whose request is dead-lettered reads `failed` with the reason — `GET /source-lists/{id}`,
  its runs, and its run's event stream — instead of `running` for ever.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from bench.harness.servers import Servers
from research_contracts import subjects
from research_contracts.sourcelists import RequestSourceList
from research_gateway.main import create_app
from research_ledger import UnitOfWork, dead_letters
from research_ledger.deidentified import UncleanText
from research_platform.delivery import DeadLetter
from research_platform.settings import Settings
from tests.scout.conftest import fake_connector
from tests.scout.hits import VITAMIN_D
from tests.teardown import left_within

pytestmark = pytest.mark.integration
API = "/api/research/v1"
PROMPTS = (
    "Does vitamin D supplementation reduce fracture risk in older adults?",
    "IFN-γ release assays for latent tuberculosis in 1,000 health-care workers",
    "β-blockers after myocardial infarction (p < .001) in the Framingham Heart Study",
    "West Nile virus neuroinvasive disease in a San Francisco cohort",
    "Does Priyanka's eGFR of 38 change the apixaban dose?",
)
# UUIDs that hold what reads like an identifier in free text (issue 36).
RISKY_IDS = (
    "d4fd681a-0242-4616-8c1e-52b1d0e7a9f3",  # "0242-4616": a phone
    "31415926-5358-4979-a323-846264338327",  # an all-digit first group: a record number
    "a19dec20-7f3e-4c1b-9d2a-1f0e5b6c7d8e",  # "9dec20": a date
    "0b9dec2a-2024-4011-8000-000000000001",  # "2024-4011": a year and a phone group
    "12031961-1203-4961-8123-120319611203",  # "12031961": a compact date of birth
)


@pytest.fixture(scope="module")
async def gateway(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    app: FastAPI = create_app(
        Settings(nats_url=servers.nats_url, database_url=servers.database_url)
    )
    async with (
        left_within(app.router.lifespan_context(app), "gateway lifespan"),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=60
        ) as client,
    ):
        yield client


def _ids(n: int) -> list[str]:
    rng = random.Random(36)
    return [
        *RISKY_IDS,
        *(str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n - len(RISKY_IDS))),
    ]


async def test_two_hundred_source_lists_all_reach_a_result(
    gateway, api_keys, nc, scout_factory, sessions, unique
) -> None:
    # 200 lists from one key: an admin key, exempt from the per-key quotas (a researcher's is 5 in
    # flight and 120 an hour), which also names a fresh workspace without a binding.
    started = time.monotonic()
    ids = _ids(200)
    commands: list[RequestSourceList] = []
    for n, list_id in enumerate(ids):
        accepted = await gateway.post(
            f"{API}/source-lists",
            headers=api_keys["admin"],
            json={
                "source_list_id": list_id,
                "prompt": PROMPTS[n % len(PROMPTS)],
                "num_references": 2,
                "workspace": f"ws-{unique}",
                "save_to": {"kind": "task", "id": str(uuid.uuid4())},
            },
        )
        assert accepted.status_code == 202, (list_id, accepted.text)
        commands.append(
            RequestSourceList.model_validate(
                {
                    **accepted.json()["request"],
                    "run_id": accepted.json()["run_id"],
                    "trigger": "request",
                }
            )
        )
    assert [str(c.source_list_id) for c in commands] == ids

    async with fake_connector(nc, f"test.connector.{unique}") as connector:
        connector.hits = VITAMIN_D
        scout = scout_factory(connector.subject)
        gate = asyncio.Semaphore(8)

        async def build(command: RequestSourceList) -> None:
            async with gate:
                outcome = await scout.handle(command)
                assert outcome.error is None and outcome.version == 1, (
                    command.source_list_id,
                    outcome.error,
                )

        await asyncio.gather(*(build(c) for c in commands))

    async with sessions() as session:
        ledger = UnitOfWork(session, service="test")
        states = []
        for i in ids:
            row = await ledger.reports.get(uuid.UUID(i))
            assert row is not None, i
            states.append(row.status)
    assert states == ["completed"] * len(ids)
    for n, list_id in enumerate(
        RISKY_IDS
    ):  # the snapshot reads back; the vitamin D prompt found its papers
        got = await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])
        assert got.status_code == 200 and (n % len(PROMPTS) or got.json()["sources"]), got.text
    assert time.monotonic() - started < 600


async def test_a_refused_text_is_one_422_and_nothing_is_published(
    gateway, api_keys, nc, monkeypatch, unique
):
    """The ledger's check runs before the command is published: a refusal leaves the bus untouched."""
    from research_ledger import deidentified

    marker = f"refuse{unique}"

    def refuse(text, *, what):  # the ledger refusing a text (as it did for a UUID read as a phone)
        if text and marker in text:
            raise UncleanText(
                f"{what} holds identifiers (PHONE): de-identify it at the boundary first"
            )
        return text

    monkeypatch.setattr(deidentified, "require_clean", refuse)
    js = nc.jetstream()
    before = (await js.stream_info(subjects.SOURCELISTS_STREAM)).state.last_seq
    list_id = str(uuid.uuid4())
    refused = await gateway.post(
        f"{API}/source-lists",
        headers=api_keys["researcher"],
        json={"source_list_id": list_id, "prompt": f"vitamin D and {marker} fractures"},
    )
    assert refused.status_code == 422 and "PHONE" in refused.text
    assert (
        await js.stream_info(subjects.SOURCELISTS_STREAM)
    ).state.last_seq == before  # nothing went out
    assert (
        await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])
    ).status_code == 404
    for route, body in (
        ("reviews", {"topic": f"vitamin D and {marker}"}),
        ("verifications", {"claim": f"vitamin D {marker} works"}),
    ):
        stream = subjects.REVIEWS_STREAM if route == "reviews" else subjects.VERIFICATIONS_STREAM
        last = (await js.stream_info(stream)).state.last_seq
        answer = await gateway.post(f"{API}/{route}", headers=api_keys["researcher"], json=body)
        assert answer.status_code == 422, (route, answer.text)
        assert (await js.stream_info(stream)).state.last_seq == last, route


async def test_a_dead_lettered_source_list_reads_failed_with_the_reason(
    gateway, api_keys, nc, sessions, unique
) -> None:
    accepted = await gateway.post(
        f"{API}/source-lists",
        headers=api_keys["admin"],  # admins may name any workspace
        json={"prompt": PROMPTS[0], "workspace": f"ws-{unique}"},
    )
    assert accepted.status_code == 202, accepted.text
    list_id, run_id = accepted.json()["source_list_id"], accepted.json()["run_id"]
    async with (
        sessions() as session,
        session.begin(),
    ):  # the scout had started the run before every delivery failed
        from research_ledger.source_lists import SourceListBook

        assert await SourceListBook(session, service="scout").start_run(
            run_id, uuid.UUID(list_id), "request"
        )

    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

    parked = Msg(  # a core NATS message: no JetStream position to name it by
        _client=NATS(),
        subject=subjects.SOURCELIST_REQUESTED,
        data=json.dumps(
            {"source_list_id": list_id, "run_id": run_id, "prompt": PROMPTS[0]}
        ).encode(),
    )

    told: list[tuple[str, str]] = []

    async def tell_run(run: str, reason: str) -> None:
        told.append((run, reason))

    letter = DeadLetter.of(
        "scout", parked, "transient after 5 deliveries: ToolsUnavailable('corpus tools down')"
    )
    assert letter.report_id == uuid.UUID(list_id)
    await dead_letters.recorder(sessions, "scout", tell_run=tell_run)(letter)

    got = await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])
    assert got.status_code == 409
    detail = got.json()["detail"]
    assert (
        detail["status"] == "failed"
        and "dead-lettered" in detail["error"]
        and "ToolsUnavailable" in detail["error"]
    )
    runs = (
        await gateway.get(f"{API}/source-lists/{list_id}/runs", headers=api_keys["reader"])
    ).json()
    mine = [r for r in runs["runs"] if r["run_id"] == run_id]
    assert (
        mine
        and mine[0]["status"] == "failed"
        and "ToolsUnavailable" in (mine[0].get("error") or "")
    )
    listed = (await gateway.get(f"{API}/source-lists", headers=api_keys["reader"])).json()
    assert next(r for r in listed if r["source_list_id"] == list_id)["status"] == "failed"
    assert told == [
        (run_id, f"dead-lettered from {subjects.SOURCELIST_REQUESTED}: {letter.reason}")
    ]
