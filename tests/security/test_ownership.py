"""Runs and reports belong to somebody: run ids are the server's (a client's is a 422, over HTTP
and through the MCP tools), a run is never joined by another list's command, the gateway opens a
report it is asked for with its owner before the command goes out (the outbox), and a researcher key changes only what it asked for
(another researcher's gets 403 with the reason; an admin may change anything)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import subjects
from research_contracts.reviews import RequestReview
from research_contracts.sourcelists import ListedSource, SourceList
from research_gateway.mcp.gateway_api import GatewayApi, ToolFailure
from research_gateway.mcp.tools import TOOLS
from research_ledger import RunTaken, UnitOfWork
from research_ledger.outbox import OutboxEvent
from research_ledger.source_lists import SourceListBook
from research_ledger.tables import ReportRow
from tests.keys import auth
from tests.security.conftest import Gateway

pytestmark = pytest.mark.integration
API = "/api/research/v1"
TOPIC = "vitamin D supplementation and fracture risk in older adults"


async def _no_progress(step: float, message: str) -> None:
    return None


async def test_a_clients_run_id_is_refused_over_http_and_through_the_mcp_tools(
    gateway: Gateway, api_keys: dict[str, dict[str, str]], unique: str
) -> None:
    someone_elses = f"sl-{uuid.uuid4().hex[:16]}"
    bodies = {
        "/reviews": {"topic": TOPIC, "run_id": f"rv-{unique}"},
        "/source-lists": {"prompt": TOPIC, "run_id": someone_elses},
        "/verifications": {
            "claim": "Vitamin D reduces fractures in older adults",
            "run_id": f"vf-{unique}",
        },
    }
    async with gateway() as (app, client):
        for route, body in bodies.items():
            answer = await client.post(f"{API}{route}", json=body, headers=api_keys["researcher"])
            assert answer.status_code == 422 and "run_id" in answer.text, (
                route,
                answer.status_code,
                answer.text,
            )
        assert "run_id" not in TOOLS["build_source_list"].input_schema["properties"]
        api = GatewayApi.in_process(app, api_keys["researcher"]["X-API-Key"])
        try:
            for tool, arguments in (
                ("start_review", {"topic": TOPIC, "run_id": f"rv-{unique}", "wait_seconds": 0}),
                (
                    "build_source_list",
                    {"prompt": TOPIC, "run_id": someone_elses, "wait_seconds": 0},
                ),
            ):
                with pytest.raises(ToolFailure) as refused:
                    await TOOLS[tool].run(api, arguments, _no_progress)
                assert refused.value.status == 422 and "run_id" in refused.value.reason, (
                    tool,
                    refused.value,
                )
        finally:
            await api.aclose()


async def _open(
    sessions: async_sessionmaker[AsyncSession],
    report_id: uuid.UUID,
    kind: str,
    run_id: str,
    owner: dict[str, str] | None,
) -> bool:
    async with sessions() as session, session.begin():
        return await UnitOfWork(session, service="test").reports.open(
            report_id, kind=kind, run_id=run_id, subject=TOPIC, subject_key=TOPIC, owner=owner
        )


async def test_a_run_is_never_joined_by_another_lists_command(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    run_id, mine, theirs = f"sl-{unique}", uuid.uuid4(), uuid.uuid4()
    for list_id in (mine, theirs):
        assert await _open(sessions, list_id, "source_list", f"sl-{uuid.uuid4().hex[:16]}", None)
    async with sessions() as session, session.begin():
        assert await SourceListBook(session, service="scout").start_run(run_id, mine, "request")
    async with (
        sessions() as session,
        session.begin(),
    ):  # a redelivery of the same list's command goes on
        assert await SourceListBook(session, service="scout").start_run(run_id, mine, "request")
    with pytest.raises(RunTaken, match="another source list"):
        async with sessions() as session, session.begin():
            await SourceListBook(session, service="scout").start_run(run_id, theirs, "request")


async def test_the_gateway_opens_the_report_with_its_owner_before_its_command_goes_out(
    gateway: Gateway,
    api_keys: dict[str, dict[str, str]],
    sessions: async_sessionmaker[AsyncSession],
    nc: nats.NATS,
) -> None:
    commands = await nc.jetstream().subscribe(
        subjects.REVIEW_REQUESTED, config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    )
    async with gateway() as (_, client):
        accepted = await client.post(
            f"{API}/reviews", json={"topic": TOPIC}, headers=api_keys["researcher"]
        )
        assert accepted.status_code == 202, accepted.text
        review_id, run_id = uuid.UUID(accepted.json()["review_id"]), accepted.json()["run_id"]
        while True:  # the gateway's relay publishes the staged command after the commit
            command = RequestReview.model_validate_json((await commands.next_msg(10)).data)
            if command.review_id == review_id:
                break
    await commands.unsubscribe()
    async with sessions() as session:
        row = await session.get(ReportRow, review_id)
        staged = await session.scalar(
            select(OutboxEvent).where(OutboxEvent.msg_id == f"review-{review_id}-{run_id}")
        )
    assert row is not None and row.owner.get("key_id"), "opened by the gateway, with its owner"
    assert staged is not None, "the command went out through the outbox, with its dedup id"
    # the reviewer opens every command it receives: here a no-op, and an open never changes a row
    assert not await _open(sessions, review_id, "review", run_id, None)
    assert not await _open(sessions, review_id, "review", run_id, {"key_id": str(uuid.uuid4())})
    async with sessions() as session:
        again = await session.get(ReportRow, review_id)
    assert again is not None and again.owner == row.owner


async def _source_list(
    sessions: async_sessionmaker[AsyncSession], owner: dict[str, str] | None, unique: str
) -> tuple[uuid.UUID, str]:
    """A completed source list owned by `owner`, with one source in its snapshot."""
    list_id, run_id = uuid.uuid4(), f"sl-{uuid.uuid4().hex[:16]}"
    source = ListedSource(
        source_id=uuid.uuid4(),
        title=f"Vitamin D and fractures {unique}",
        relevance_score=0.9,
        summary="Vitamin D lowered fracture risk.",
    )
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        await ledger.reports.open(
            list_id,
            kind="source_list",
            run_id=run_id,
            subject=TOPIC,
            subject_key=TOPIC,
            request={"prompt": TOPIC},
            owner=owner,
        )
        await ledger.reports.save_version(
            list_id,
            run_id=run_id,
            markdown="# list",
            content={
                "source_list": SourceList(
                    run_id=run_id,
                    prompt=TOPIC,
                    keywords=["vitamin D"],
                    source_type="academic",
                    detail_level="citation_summary",
                    generated_at=datetime.now(UTC),
                    sources=[source],
                ).model_dump(mode="json")
            },
        )
        await ledger.reports.complete(list_id)
    return list_id, str(source.source_id)


async def _review(sessions: async_sessionmaker[AsyncSession], owner: dict[str, str]) -> uuid.UUID:
    review_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        await ledger.reports.open(
            review_id,
            kind="review",
            run_id=f"rv-{review_id.hex[:16]}-1",
            subject=TOPIC,
            subject_key=TOPIC,
            owner=owner,
        )
        await ledger.reports.fail(review_id, "the test ends it")
    return review_id


async def test_a_researcher_key_changes_only_what_it_asked_for_and_an_admin_anything(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    from research_gateway.auth import ApiKeys

    keys: dict[str, Any] = {}
    for who, role in (("owner", "researcher"), ("other", "researcher"), ("admin", "admin")):
        async with sessions() as session, session.begin():
            key_id, secret = await ApiKeys(UnitOfWork(session, service="gateway")).issue(
                role, name=f"{who} {unique}"
            )
        keys[who] = (key_id, auth(secret))
    owned = {"key_id": str(keys["owner"][0])}
    list_id, source_id = await _source_list(sessions, owned, unique)
    orphan_id, orphan_source = await _source_list(sessions, None, unique)
    review_id = await _review(sessions, owned)
    async with gateway() as (_, client):
        refused = [
            await client.post(f"{API}/reviews/{review_id}/refresh", headers=keys["other"][1]),
            await client.post(f"{API}/source-lists/{list_id}/runs", headers=keys["other"][1]),
            await client.post(
                f"{API}/source-lists/{list_id}/sources/{source_id}",
                json={"action": "remove"},
                headers=keys["other"][1],
            ),
        ]
        for answer in refused:
            assert answer.status_code == 403 and "not yours" in answer.json()["detail"], answer.text
        nobodys = await client.post(
            f"{API}/source-lists/{orphan_id}/sources/{orphan_source}",
            json={"action": "remove"},
            headers=keys["owner"][1],
        )
        assert nobodys.status_code == 403 and "no key owns it" in nobodys.json()["detail"]
        assert (
            await client.get(f"{API}/source-lists/{list_id}", headers=keys["other"][1])
        ).status_code == 200  # reads stay open
        for who, action in (("owner", "prefer"), ("admin", "remove")):
            done = await client.post(
                f"{API}/source-lists/{list_id}/sources/{source_id}",
                json={"action": action},
                headers=keys[who][1],
            )
            assert done.status_code == 200, (who, done.text)
        assert (
            await client.post(
                f"{API}/source-lists/{orphan_id}/sources/{orphan_source}",
                json={"action": "prefer"},
                headers=keys["admin"][1],
            )
        ).status_code == 200
