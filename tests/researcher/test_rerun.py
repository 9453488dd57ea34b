"""The replicator's re-run over real NATS request/reply: fresh evidence, the topic only, no ledger writes."""

from __future__ import annotations

import json
import uuid

import nats
import pytest
from sqlalchemy import func, select

from research_contracts import EvidenceRefreshed, RerunResearch, subjects
from research_ledger.tables import AuditEvent, MemoryClaim
from tests.researcher.fakes import EVIDENCE, FakeConnector

pytestmark = pytest.mark.integration


async def _ledger_size(sessions) -> tuple[int, int]:
    async with sessions() as session:
        claims = await session.scalar(select(func.count()).select_from(MemoryClaim))
        audits = await session.scalar(
            select(func.count()).select_from(AuditEvent).where(AuditEvent.service == "researcher")
        )
    return claims, audits


async def test_rerun_answers_with_fresh_evidence_asked_by_topic_only(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions
) -> None:
    request = RerunResearch(
        claim_id=uuid.uuid4(),
        question="Does denosumab reduce vertebral fractures in Margaret Whitfield (MRN: 48213377)?",
        sources=["corpus", "pubmed"],
        limit=7,
    )
    async with start_researcher():
        before = await _ledger_size(sessions)
        reply = await nc.request(
            subjects.RESEARCHER_RERUN, request.model_dump_json().encode(), timeout=20
        )
        bad = await nc.request(
            subjects.RESEARCHER_RERUN,
            json.dumps({"claim_id": str(request.claim_id)}).encode(),
            timeout=20,
        )
        after = await _ledger_size(sessions)

    refreshed = EvidenceRefreshed.model_validate_json(reply.data)
    assert refreshed.claim_id == request.claim_id and refreshed.error is None
    assert [h.source_id for h in refreshed.hits] == [h.source_id for h in EVIDENCE]
    [search] = connector.requests
    assert search.sources == ["corpus", "pubmed"] and search.limit == 7
    assert (
        "denosumab" in search.query
        and "Whitfield" not in search.query
        and "48213377" not in search.query
    )
    rejected = EvidenceRefreshed.model_validate_json(bad.data)
    assert (
        rejected.claim_id == request.claim_id
        and "question" in (rejected.error or "")
        and not rejected.hits
    )
    assert after == before  # nothing written to the ledger or the audit log
