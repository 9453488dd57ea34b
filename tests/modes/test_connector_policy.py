"""The modes' one connector client and failure policy on real NATS + Postgres: a search that finds
no responder (the connector not subscribed yet, as right after `up`) is waited for instead of
counting as an empty answer; a source list whose every source failed ends `failed` with the reason
(report, run, audit row, run events) instead of `completed` with zero sources."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from research_contracts import EvidenceFound, SearchEvidence
from research_contracts.corpus_tools import SearchPapers
from research_contracts.runs import RunDone
from research_contracts.sourcelists import RequestSourceList
from research_ledger import Ledger, UnitOfWork
from research_ledger.source_lists import SourceListBook
from research_ledger.tables import AuditEvent
from research_modes import ConnectorClient, ToolsUnavailable
from research_runs import replay
from research_scout.pipeline import Scout
from research_scout.settings import ScoutSettings
from tests.scout.conftest import fake_connector
from tests.scout.hits import VITAMIN_D, recorded

pytestmark = pytest.mark.integration
PROMPT = "Does vitamin D supplementation reduce fracture risk in older adults?"


def scout(sessions, nc, subject: str, *, wait_s: float) -> Scout:
    js = nc.jetstream()

    client = ConnectorClient(
        lambda: nc, timeout_s=10.0, no_responder_wait_s=wait_s, search_subject=subject
    )
    return Scout(
        ledger=Ledger(sessions),
        settings=ScoutSettings(max_iterations=2),
        search=client.search,
        jetstream=lambda: js,
    )


async def test_a_search_before_the_connector_subscribed_waits_for_it(nc, unique) -> None:
    subject = f"test.connector.{unique}"
    client = ConnectorClient(
        lambda: nc, timeout_s=5.0, no_responder_wait_s=15.0, search_subject=subject
    )
    asked = asyncio.create_task(
        client.search(SearchEvidence(query="vitamin D fracture", sources=["pubmed"]))
    )
    await asyncio.sleep(0.8)
    assert not asked.done(), "no responder is not an answer"
    async with fake_connector(nc, subject) as connector:
        connector.hits = list(VITAMIN_D)
        found = await asyncio.wait_for(asked, 30)
    assert len(found.hits) == len(VITAMIN_D) and found.degraded == {}
    assert [a.query for a in connector.asked] == ["vitamin D fracture"]


async def test_no_responder_past_the_bound_is_a_degraded_search_and_a_tool_failure(
    nc, unique
) -> None:
    client = ConnectorClient(
        lambda: nc,
        timeout_s=5.0,
        no_responder_wait_s=0.3,
        search_subject=f"test.connector.{unique}",
    )
    found = await client.search(
        SearchEvidence(query="vitamin D fracture", sources=["pubmed", "crossref"])
    )
    assert found.hits == [] and set(found.degraded) == {"pubmed", "crossref"}
    assert all("NoRespondersError" in why for why in found.degraded.values())
    with pytest.raises(ToolsUnavailable, match=f"no_such_tool_{unique}"):
        await client.call(f"no_such_tool_{unique}", SearchPapers(query="x"))


@pytest.mark.usefixtures(
    "shared_dir"
)  # recorded() is read inside a responder: skip before, not time out
async def test_a_source_list_asked_right_after_up_gets_its_sources(nc, sessions, unique) -> None:
    """The defect: a list asked seconds after start completed with 0 sources after two NoRespondersError."""
    subject = f"test.connector.{unique}"
    command = RequestSourceList(
        prompt=PROMPT, num_references=3, detail_level="facts_list", source_type="academic"
    )
    run = asyncio.create_task(scout(sessions, nc, subject, wait_s=15.0).handle(command))
    await asyncio.sleep(1.0)
    async with fake_connector(nc, subject) as connector:
        connector.hits = [*VITAMIN_D, *recorded()]
        outcome = await asyncio.wait_for(run, 120)
    assert (
        outcome.error is None
        and outcome.snapshot is not None
        and outcome.snapshot.source_list.sources
    )
    assert "sources_down" not in outcome.snapshot.report.metadata


async def test_every_source_down_fails_the_run_with_the_reason(nc, sessions, unique) -> None:
    command = RequestSourceList(
        prompt=PROMPT, num_references=3, detail_level="facts_list", source_type="academic"
    )
    outcome = await scout(sessions, nc, f"test.connector.{unique}", wait_s=0.3).handle(command)
    assert outcome.snapshot is None and outcome.error is not None
    assert (
        "SourcesDown" in outcome.error
        and "every source failed" in outcome.error
        and "NoRespondersError" in outcome.error
    )
    async with sessions() as session:
        report = await UnitOfWork(session, service="test").reports.get(command.source_list_id)
        (run,) = await SourceListBook(session, service="test").runs(command.source_list_id)
        (audit,) = await session.scalars(
            select(AuditEvent).where(
                AuditEvent.action == "research.report.sources_down",
                AuditEvent.subject_ids["report_id"].astext == str(command.source_list_id),
            )
        )
        versions = await UnitOfWork(session, service="test").reports.versions(
            command.source_list_id
        )
    assert report is not None and report.error is not None and run.error is not None
    assert report.status == "failed" and "every source failed" in report.error and versions == []
    assert run.status == "failed" and "every source failed" in run.error
    assert audit.payload["all_down"] is True and audit.payload["kind"] == "source_list"
    assert set(audit.payload["sources"]) == {
        "semantic_scholar",
        "crossref",
        "openalex",
        "pubmed",
        "europepmc",
        "arxiv",
        "corpus",
    }
    events = [event async for _, event in replay(nc.jetstream(), command.run_id)]
    assert isinstance(events[-1], RunDone) and events[-1].status == "failed"
    assert any(
        e.type == "reasoning" and "Sources down" in e.text and "pubmed" in e.text for e in events
    )
    assert any(e.type == "error" and "every source failed" in e.message for e in events)


@pytest.mark.usefixtures(
    "shared_dir"
)  # recorded() is read inside a responder: skip before, not time out
async def test_one_source_down_is_named_in_the_report_and_audited(nc, sessions, unique) -> None:
    subject = f"test.connector.{unique}"

    async def answer(msg) -> None:
        ask = SearchEvidence.model_validate_json(msg.data)
        degraded = {"pubmed": "http_503"} if "pubmed" in ask.sources else {}
        await msg.respond(
            EvidenceFound(hits=[*VITAMIN_D, *recorded()], degraded=degraded)
            .model_dump_json()
            .encode()
        )

    sub = await nc.subscribe(subject, cb=answer)
    try:
        command = RequestSourceList(
            prompt=PROMPT, num_references=3, detail_level="facts_list", source_type="academic"
        )
        outcome = await scout(sessions, nc, subject, wait_s=5.0).handle(command)
    finally:
        await sub.unsubscribe()
    assert outcome.error is None and outcome.snapshot is not None
    assert outcome.snapshot.report.metadata["sources_down"] == {"pubmed": "http_503"}
    async with sessions() as session:
        report = await UnitOfWork(session, service="test").reports.get(command.source_list_id)
        (audit,) = await session.scalars(
            select(AuditEvent).where(
                AuditEvent.action == "research.report.sources_down",
                AuditEvent.subject_ids["report_id"].astext == str(command.source_list_id),
            )
        )
        version = await UnitOfWork(session, service="test").reports.version(command.source_list_id)
    assert report is not None and version is not None
    assert report.status == "completed" and audit.payload["sources"] == {"pubmed": "http_503"}
    assert audit.payload["all_down"] is False
    assert version.content["report"]["metadata"]["sources_down"] == {"pubmed": "http_503"}, (
        "the stored report says it"
    )
