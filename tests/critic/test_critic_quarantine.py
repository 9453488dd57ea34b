"""The critic over real NATS + Postgres: quarantine after 3 SLA timeouts, idempotent redelivery, the
operator's drain, and re-critique of active claims (from the replicator)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_contracts import ClaimDecided, ClaimProposed, ControlReply, RecritiqueClaim, subjects
from research_critic.main import create_app
from research_critic.settings import CriticServiceSettings, CriticSettings
from research_ledger import UnitOfWork
from research_ledger.findings import Findings
from research_ledger.tables import AuditEvent, CriticVerdictRow, MemoryClaim
from research_platform.db import transaction
from research_platform.settings import LLMSettings
from tests.agents.apps import ask, running
from tests.agents.ledger import add_claim, add_sources, support

pytestmark = pytest.mark.integration

STATEMENT = "Vitamin D supplementation reduces the risk of hip fracture in older adults."


@pytest.fixture
async def silent_llm() -> AsyncIterator[str]:
    """An OpenAI-compatible endpoint that accepts connections and never answers (an LLM outage)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"
    for writer in held:
        writer.close()
    server.close()


def _settings(servers: Servers, llm: LLMSettings, sla: float) -> CriticServiceSettings:
    return CriticServiceSettings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        llm=llm,
        critic=CriticSettings(sla_seconds=sla, quarantine_after=3, concurrency=2),
        max_deliver=6,
        ack_wait_s=30,
    )


async def _claim(sessions: async_sessionmaker[AsyncSession], claim_id: uuid.UUID) -> MemoryClaim:
    async with sessions() as session:
        claim = await session.get(MemoryClaim, claim_id)
        assert claim is not None
        return claim


async def _wait_status(
    sessions: async_sessionmaker[AsyncSession],
    claim_id: uuid.UUID,
    wanted: set[str],
    timeout: float = 60,
) -> MemoryClaim:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        claim = await _claim(sessions, claim_id)
        if claim.status in wanted:
            return claim
        assert asyncio.get_running_loop().time() < deadline, f"claim stayed {claim.status}"
        await asyncio.sleep(0.2)


async def _actions(
    sessions: async_sessionmaker[AsyncSession], claim_id: uuid.UUID
) -> list[AuditEvent]:
    async with sessions() as session:
        return list(
            await session.scalars(
                select(AuditEvent).where(AuditEvent.claim_id == claim_id).order_by(AuditEvent.id)
            )
        )


async def _propose(nc: nats.NATS, claim: MemoryClaim, msg_id: str) -> None:
    body = (
        ClaimProposed(claim_id=claim.id, entity=claim.entity, statement=claim.statement)
        .model_dump_json()
        .encode()
    )
    await nc.jetstream().publish(
        subjects.CLAIM_PENDING, body, headers={subjects.MSG_ID_HEADER: msg_id}
    )


async def test_quarantine_after_three_timeouts_then_drain(
    servers: Servers,
    nc: nats.NATS,
    sessions: async_sessionmaker[AsyncSession],
    silent_llm: str,
    unique: str,
) -> None:
    await add_sources(sessions, f"pmid:{unique}1", f"pmid:{unique}2")
    claim_id = await add_claim(
        sessions,
        entity=unique,
        statement=STATEMENT,
        status="pending",
        confidence=0.9,
        supports=[support(f"pmid:{unique}1", STATEMENT), support(f"pmid:{unique}2", STATEMENT)],
    )
    claim = await _claim(sessions, claim_id)
    decided = await nc.jetstream().subscribe(
        subjects.CLAIM_DECIDED, config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    )
    outage = LLMSettings(
        provider="openai", openai_api_key="sk-test", openai_base_url=silent_llm, timeout_s=30
    )
    async with running(create_app(_settings(servers, outage, sla=0.3))):
        await _propose(nc, claim, f"claim-proposed-{claim_id}")
        quarantined = await _wait_status(sessions, claim_id, {"critic_quarantine"})
        assert quarantined.critic_timeouts == 3
        actions = [a.action for a in await _actions(sessions, claim_id)]
        assert actions.count("research.critic.timeout") == 3
        assert actions.count("research.critic.quarantine") == 1
        while True:
            event = ClaimDecided.model_validate_json((await decided.next_msg(timeout=10)).data)
            if event.claim_id == claim_id:
                break
        assert event.status == "critic_quarantine"

        # a redelivered or repeated proposal does not touch a quarantined claim
        await _propose(nc, claim, f"claim-proposed-again-{claim_id}")
        await asyncio.sleep(1.5)
        again = await _claim(sessions, claim_id)
        assert again.status == "critic_quarantine" and again.critic_timeouts == 3
        assert [a.action for a in await _actions(sessions, claim_id)] == actions

    # the LLM is fixed (offline here); the operator drains the quarantine
    async with running(create_app(_settings(servers, LLMSettings(provider="offline"), sla=60))):
        drain = {"actor_key_id": "key-123", "args": {"claim_ids": [str(claim_id)]}}
        reply = ControlReply.model_validate_json(
            (await ask(nc, subjects.CRITIC_DRAIN, json.dumps(drain).encode(), timeout=10)).data
        )
        assert reply.status == 200 and reply.detail == {"drained": [str(claim_id)], "count": 1}
        judged = await _wait_status(sessions, claim_id, {"active", "rejected"}, timeout=120)
        assert judged.critic_timeouts == 0
        drained = [
            a for a in await _actions(sessions, claim_id) if a.action == "research.critic.drained"
        ]
        assert len(drained) == 1 and drained[0].subject_ids == {"key_id": "key-123"}
        async with sessions() as session:
            assert (
                len(
                    list(
                        await session.scalars(
                            select(CriticVerdictRow).where(CriticVerdictRow.claim_id == claim_id)
                        )
                    )
                )
                == 1
            )
        empty = ControlReply.model_validate_json(
            (await ask(nc, subjects.CRITIC_DRAIN, b"{}", timeout=10)).data
        )
        assert empty.status == 200 and str(claim_id) not in empty.detail["drained"]
        bad = ControlReply.model_validate_json(
            (
                await nc.request(
                    subjects.CRITIC_DRAIN, b'{"args": {"claim_ids": ["nope"]}}', timeout=10
                )
            ).data
        )
        assert bad.status == 400
    await decided.unsubscribe()


async def test_a_drained_proposal_read_before_the_drain_commits_is_still_judged(
    servers: Servers, nc: nats.NATS, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """The drain publishes its proposal before it commits: a critic that reads the claim in that
    window must wait for the commit, not skip the claim as decided (it would stay pending)."""
    await add_sources(sessions, f"pmid:{unique}1", f"pmid:{unique}2")
    claim_id = await add_claim(
        sessions,
        entity=unique,
        statement=STATEMENT,
        status="critic_quarantine",
        confidence=0.9,
        supports=[support(f"pmid:{unique}1", STATEMENT), support(f"pmid:{unique}2", STATEMENT)],
    )
    async with running(create_app(_settings(servers, LLMSettings(provider="offline"), sla=60))):
        async with transaction(sessions) as session:
            released = await UnitOfWork(session, service="critic").verdicts.release(
                [claim_id], "key-123"
            )
            assert [c.id for c in released] == [claim_id]
            await _propose(nc, released[0], f"claim-drained-race-{claim_id}")
            await asyncio.sleep(1.5)  # the critic reads the claim while the release is uncommitted
        judged = await _wait_status(sessions, claim_id, {"active", "rejected"}, timeout=60)
        assert judged.critic_timeouts == 0


async def test_a_recritique_read_before_the_replicators_finding_commits_waits_for_it(
    servers: Servers, nc: nats.NATS, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    """The replicator publishes the re-critique before it commits the finding that lists the lost
    sources: a critic that reads first must wait for the finding, not judge the claim on them."""
    await add_sources(sessions, f"pmid:{unique}a", f"pmid:{unique}b")
    claim_id = await add_claim(
        sessions,
        entity=unique,
        statement=STATEMENT,
        confidence=0.9,
        supports=[support(f"pmid:{unique}a", STATEMENT), support(f"pmid:{unique}b", STATEMENT)],
    )
    async with running(create_app(_settings(servers, LLMSettings(provider="offline"), sla=60))):
        async with transaction(sessions) as session:
            finding = await Findings(session, "replicator").record(
                "eroded", [claim_id], {"lost": [f"pmid:{unique}a", f"pmid:{unique}b"]}
            )
            command = RecritiqueClaim(claim_id=claim_id, reason="eroded", finding_id=finding)
            await nc.jetstream().publish(
                subjects.CLAIM_RECRITIQUE,
                command.model_dump_json().encode(),
                headers={subjects.MSG_ID_HEADER: f"recritique-race-{claim_id}"},
            )
            await asyncio.sleep(1.5)  # the critic reads while the finding is uncommitted
        withdrawn = await _wait_status(sessions, claim_id, {"rejected"}, timeout=60)
    rows = [
        a
        for a in await _actions(sessions, withdrawn.id)
        if a.action == "research.critic.recritique"
    ]
    assert len(rows) == 1 and sorted(rows[0].payload["discredited_sources"]) == [
        f"pmid:{unique}a",
        f"pmid:{unique}b",
    ]


async def test_recritique_withdraws_a_claim_whose_sources_are_retracted_and_keeps_a_sound_one(
    servers: Servers, nc: nats.NATS, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    await add_sources(sessions, f"doi:10.9/{unique}r", retracted=True)
    await add_sources(sessions, f"pmid:{unique}a", f"pmid:{unique}b")
    doomed = await add_claim(
        sessions,
        entity=f"{unique}-x",
        statement=STATEMENT,
        confidence=0.9,
        supports=[support(f"doi:10.9/{unique}r", STATEMENT)],
    )
    sound = await add_claim(
        sessions,
        entity=f"{unique}-y",
        statement=STATEMENT,
        confidence=0.9,
        supports=[support(f"pmid:{unique}a", STATEMENT), support(f"pmid:{unique}b", STATEMENT)],
    )
    js = nc.jetstream()
    async with transaction(sessions) as session:
        finding = await Findings(session, "replicator").record(
            "eroded", [doomed, sound], {"lost": []}
        )
    async with running(create_app(_settings(servers, LLMSettings(provider="offline"), sla=60))):
        for claim_id, reason, n in (
            (doomed, "retracted_source", 1),
            (sound, "eroded", 1),
            (doomed, "retracted_source", 2),
            (sound, "eroded", 2),
        ):
            command = RecritiqueClaim(claim_id=claim_id, reason=reason, finding_id=finding)
            await js.publish(
                subjects.CLAIM_RECRITIQUE,
                command.model_dump_json().encode(),
                headers={subjects.MSG_ID_HEADER: f"recritique-test-{claim_id}-{n}"},
            )
        withdrawn = await _wait_status(sessions, doomed, {"rejected"}, timeout=120)
        assert withdrawn.decided_at is not None
        deadline = asyncio.get_running_loop().time() + 60
        while not [
            a for a in await _actions(sessions, sound) if a.action == "research.critic.recritique"
        ]:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.5)  # let the repeated commands be consumed
    assert (await _claim(sessions, sound)).status == "active"
    for claim_id, outcome in ((doomed, "rejected"), (sound, "kept")):
        rows = [
            a
            for a in await _actions(sessions, claim_id)
            if a.action == "research.critic.recritique"
        ]
        assert len(rows) == 1, "a repeated command is applied once"
        assert rows[0].payload["outcome"] == outcome and rows[0].subject_ids == {
            "finding_id": str(finding)
        }
        async with sessions() as session:
            verdicts = list(
                await session.scalars(
                    select(CriticVerdictRow).where(CriticVerdictRow.claim_id == claim_id)
                )
            )
        assert len(verdicts) == 1 and verdicts[0].reasoning.startswith("re-critique")
    doomed_actions = [a.action for a in await _actions(sessions, doomed)]
    assert "research.claim.rejected" in doomed_actions
    rows = [a for a in await _actions(sessions, doomed) if a.action == "research.critic.recritique"]
    assert rows[0].payload["discredited_sources"] == [f"doi:10.9/{unique}r"]
