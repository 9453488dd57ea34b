"""The replicator end to end over real NATS: researcher re-run (the real handler) → verdicts → findings,
re-critique commands on the claims stream, audits with reasons."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import nats
import pytest
from faststream.nats import NatsMessage
from nats.js.api import ConsumerConfig, DeliverPolicy
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_agents import ScheduleSettings
from research_contracts import (
    ControlReply,
    EvidenceFound,
    RecritiqueClaim,
    SearchEvidence,
    SourceHit,
    subjects,
)
from research_ledger.tables import AuditEvent, Finding, ResearchSource
from research_platform.broker import make_broker
from research_replicator.main import create_app
from research_replicator.settings import ReplicatorServiceSettings, ReplicatorSettings
from research_researcher import prepare, rerun
from research_researcher.settings import ResearcherServiceSettings
from tests.agents.apps import ask, running
from tests.agents.ledger import add_claim, add_sources, support
from tests.teardown import stopped

pytestmark = pytest.mark.integration


def _hit(source_id: str, abstract: str = "", **metadata: object) -> SourceHit:
    return SourceHit(
        source_id=source_id,
        source=source_id.split(":", maxsplit=1)[0],
        title="t",
        abstract=abstract,
        metadata=metadata,
    )


@pytest.fixture
async def researcher(servers: Servers) -> AsyncIterator[dict[str, list[SourceHit]]]:
    """The researcher's real rerun handler in front of a fake connector that answers per question.

    The connector only sees a question's de-identified topic (the unique token is dropped), so the
    fake matches each search against the topic the researcher derives from a question."""
    evidence: dict[str, list[SourceHit]] = {}
    settings = ResearcherServiceSettings(
        nats_url=servers.nats_url, database_url=servers.database_url
    )
    broker = make_broker(servers.nats_url, "test-researcher")

    broker.include_router(rerun.router(broker, settings))

    @broker.subscriber(subjects.CONNECTOR_SEARCH, queue=subjects.CONNECTOR_QUEUE)
    async def on_search(msg: NatsMessage) -> EvidenceFound:
        ask = SearchEvidence.model_validate_json(msg.body)
        topics = {
            prepare.guard_question(question).topic_query: hits
            for question, hits in evidence.items()
        }
        if ask.query not in topics:
            return EvidenceFound(degraded={"corpus": "nothing for this question"})
        return EvidenceFound(hits=topics[ask.query])

    await broker.start()
    try:
        yield evidence
    finally:
        await stopped(broker.stop(), "researcher's broker")


async def test_replicator_verdicts(
    servers: Servers,
    nc: nats.NATS,
    researcher: dict[str, list[SourceHit]],
    sessions: async_sessionmaker[AsyncSession],
    unique: str,
) -> None:
    q = {
        name: f"{name} question {unique}?"
        for name in ("confirmed", "eroded", "retracted", "known", "empty", "young")
    }
    await add_sources(sessions, f"pmid:{unique}k", f"doi:10.1/{unique}r")
    await add_sources(sessions, f"pmid:{unique}x", retracted=True)
    ids = {
        "confirmed": await add_claim(
            sessions,
            entity=unique,
            question=q["confirmed"],
            age_days=40,
            supports=[support(f"pmid:{unique}k", "Vitamin D lowered the risk")],
        ),
        "eroded": await add_claim(
            sessions,
            entity=unique,
            question=q["eroded"],
            age_days=40,
            supports=[
                support(f"pmid:{unique}b", "old finding one"),
                support(f"pmid:{unique}c", "old finding two"),
            ],
        ),
        "retracted": await add_claim(
            sessions,
            entity=unique,
            question=q["retracted"],
            age_days=40,
            supports=[support(f"doi:10.1/{unique}r", "a fabricated result")],
        ),
        "known": await add_claim(
            sessions,
            entity=unique,
            question=q["known"],
            age_days=40,
            supports=[support(f"pmid:{unique}x", "anything")],
        ),
        "empty": await add_claim(
            sessions,
            entity=unique,
            question=q["empty"],
            age_days=40,
            supports=[support(f"pmid:{unique}e", "anything")],
        ),
        "young": await add_claim(
            sessions,
            entity=unique,
            question=q["young"],
            age_days=5,
            supports=[support(f"pmid:{unique}y", "anything")],
        ),
    }
    researcher[q["confirmed"]] = [
        _hit(f"pmid:{unique}k", "In 2019, vitamin D  lowered the RISK of falls.")
    ]
    researcher[q["eroded"]] = [
        _hit(f"pmid:{unique}b", "a text that no longer says it"),
        _hit(f"pmid:{unique}new", "newer"),
    ]
    researcher[q["retracted"]] = [
        _hit(f"doi:10.1/{unique}r", "a fabricated result", retracted=True)
    ]
    researcher[q["known"]] = [_hit(f"pmid:{unique}other", "unrelated")]
    researcher[q["young"]] = [_hit(f"pmid:{unique}y", "anything")]

    js = nc.jetstream()
    recritiques = await js.subscribe(
        subjects.CLAIM_RECRITIQUE, config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW)
    )
    settings = ReplicatorSettings(
        schedule=ScheduleSettings(enabled=False), claims_per_run=50, rerun_timeout_s=10
    )
    app = create_app(
        ReplicatorServiceSettings(
            nats_url=servers.nats_url, database_url=servers.database_url, replicator=settings
        )
    )
    async with running(app):
        reply = await ask(
            nc,
            subjects.control_subject("replicator", "run-once"),
            json.dumps({"args": {"wait": True}}).encode(),
            timeout=70,
        )
        done = ControlReply.model_validate_json(reply.data)
        assert done.status == 200 and done.detail["run"]["outcome"] == "completed"
        counts = done.detail["run"]["counts"]
        assert (
            counts["confirmed"] >= 1 and counts["eroded"] >= 1 and counts["retracted_source"] >= 2
        )

        async with sessions() as session:
            actions = {
                name: [
                    (a.action, a.payload)
                    for a in await session.scalars(
                        select(AuditEvent).where(AuditEvent.claim_id == claim_id)
                    )
                ]
                for name, claim_id in ids.items()
            }
            findings = {
                name: [
                    (f.kind, f.id)
                    for f in await session.scalars(
                        select(Finding).where(
                            Finding.agent == "replicator", Finding.claim_ids.contains([claim_id])
                        )
                    )
                ]
                for name, claim_id in ids.items()
            }
            learnt = await session.get(ResearchSource, f"doi:10.1/{unique}r")
        assert [a for a, _ in actions["confirmed"]] == [
            "research.replicator.confirmed"
        ] and findings["confirmed"] == []
        assert [k for k, _ in findings["eroded"]] == ["eroded"]
        (eroded_audit,) = actions["eroded"]
        assert (
            eroded_audit[0] == "research.replicator.finding"
            and eroded_audit[1]["share_kept"] == 0.0
        )
        assert [k for k, _ in findings["retracted"]] == ["retracted_source"]
        assert [k for k, _ in findings["known"]] == ["retracted_source"], (
            "a retraction the ledger knows counts too"
        )
        assert learnt is not None and learnt.retracted, "the ledger learns the retraction"
        (skip,) = actions["empty"]
        assert skip[0] == "research.replicator.skipped" and skip[1]["reason"] == "no_fresh_evidence"
        assert actions["young"] == [] and findings["young"] == []

        sent: dict[str, RecritiqueClaim] = {}
        for _ in range(3):
            msg = await recritiques.next_msg(timeout=5)
            command = RecritiqueClaim.model_validate_json(msg.data)
            sent[str(command.claim_id)] = command
        for name in ("eroded", "retracted", "known"):
            command = sent[str(ids[name])]
            assert command.finding_id == findings[name][0][1]
            assert command.reason == findings[name][0][0]

        # the next run does not re-check them: recently checked, or an open finding
        again = ControlReply.model_validate_json(
            (
                await ask(
                    nc,
                    subjects.control_subject("replicator", "run-once"),
                    b'{"args": {"wait": true}}',
                    timeout=70,
                )
            ).data
        )
        assert again.detail["run"]["outcome"] == "completed"
        async with sessions() as session:
            audited = await session.scalars(
                select(AuditEvent.claim_id).where(AuditEvent.claim_id.in_(list(ids.values())))
            )
            assert len(list(audited)) == 5, "no claim was re-checked twice"
        with pytest.raises(asyncio.TimeoutError):
            await recritiques.next_msg(timeout=1)
    await recritiques.unsubscribe()
