"""A review through the real bus: RequestReview → connector corpus tools → author → peer
reviewer → report version, claims, run events, `research.review.completed`; on real NATS
JetStream and Postgres."""

from __future__ import annotations

import asyncio

import nats
import pytest
from faststream import FastStream
from nats.js import JetStreamContext
from sqlalchemy import select

from research_contracts import subjects
from research_contracts.reviews import RequestReview, ReviewCompleted
from research_ledger import UnitOfWork
from research_ledger.tables import AuditEvent, MemoryClaim
from research_reports import Report, check_report
from research_runs import replay
from tests.reviewer.conftest import TOPIC, wait_for_report

pytestmark = pytest.mark.integration


async def test_a_review_request_on_the_bus_yields_a_checked_versioned_report(
    reviewer_service: FastStream,
    js: JetStreamContext,
    nc: nats.NATS,
    sessions,
    unique: str,
) -> None:
    command = RequestReview(topic=TOPIC, max_iterations=2)
    completions: asyncio.Queue[ReviewCompleted] = asyncio.Queue()

    async def on_completed(msg) -> None:
        event = ReviewCompleted.model_validate_json(msg.data)
        if event.review_id == command.review_id:
            await completions.put(event)

    subscription = await nc.subscribe(subjects.REVIEW_COMPLETED, cb=on_completed)
    await js.publish(
        subjects.REVIEW_REQUESTED,
        command.model_dump_json().encode(),
        headers={subjects.MSG_ID_HEADER: f"review-{command.review_id}"},
    )
    row = await wait_for_report(sessions, command.review_id)
    assert row.status == "completed", row.error
    try:
        completed = await asyncio.wait_for(completions.get(), timeout=30)
    finally:
        await subscription.unsubscribe()
    async with sessions() as session:
        version = await UnitOfWork(session, service="t").reports.version(command.review_id)
        assert version is not None and version.version == 1
        report = Report.model_validate(version.content)
        claims = list(
            await session.scalars(select(MemoryClaim).where(MemoryClaim.id.in_(version.claim_ids)))
        )
        verdicts = list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.action == "research.review.verdict",
                    AuditEvent.subject_ids["report_id"].astext == str(command.review_id),
                )
            )
        )
    titles = [s.title for s in report.sections]
    assert titles[:3] == ["Introduction", "Research Landscape", "Key Findings"] and len(titles) == 6
    key_findings = report.section("Key Findings")
    assert key_findings is not None
    findings = key_findings.findings
    assert findings and all(
        f.tag in {"SUPPORTED", "CONTESTED", "INSUFFICIENT"} and f.quotes for f in findings
    )
    check = check_report(report)
    assert not check.unknown_ids and version.citation_check["unknown_ids"] == []
    assert {c.id for c in claims} == set(version.claim_ids) and len(claims) == len(findings)
    assert all(c.entity == report.metadata["topic_key"] for c in claims)
    assert version.review["verdict"] in ("PASS", "REVISION_NEEDED") and len(verdicts) == len(
        version.review["rounds"]
    )
    events = [event async for _, event in replay(js, command.effective_run_id())]
    types = [e.type for e in events]
    assert (
        types[0] == "agent_start"
        and types[-1] == "done"
        and "verdict" in types
        and "result" in types
    )
    tools = {e.tool_id for e in events if e.type == "tool_call"}
    assert {
        "research.corpus_overview",
        "research.publication_trends",
        "research.top_cited",
        "research.search_metadata",
        "research.search_papers",
        "research.get_paper",
        "author.plan",
        "peer_review.check_7",
    } <= tools
    # The run's completion event names what was stored.
    assert (completed.run_id, completed.version) == (command.effective_run_id(), 1)
    assert completed.verdict == version.review["verdict"] and not completed.refresh
    assert completed.claims == len(version.claim_ids) == len(claims)
    assert completed.iterations == len(version.review["rounds"])
