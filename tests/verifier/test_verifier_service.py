"""The verifier service end to end (real NATS + Postgres): a `RequestVerification` on the bus →
searches over NATS (a crafted corpus) → labelled passages → verdict → a six-section report that
passed the citation checker, stored as a `verification` report with run events and audit rows.

The six verdicts come from crafted evidence labelled by the LLM engine (the fake OpenAI server
answers the labels), so each verdict of the rule is reached through the whole service; the
offline classifier's path is covered by a clearly supported claim and a compound claim."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from faststream import FastStream
from faststream.nats import NatsBroker
from nats.js import JetStreamContext
from sqlalchemy import select, update

from research_contracts import EvidenceFound, SearchEvidence, SourceHit, subjects
from research_contracts.verifications import RequestVerification, VerificationChanged
from research_ledger import Ledger, UnitOfWork
from research_ledger.findings import Findings, FindingView
from research_ledger.outbox import broker_relay
from research_ledger.tables import AuditEvent, ResearchSource
from research_ledger.watched import WatchedClaimRow
from research_replicator.watched import request_due
from research_runs import replay
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer
from tests.verifier.conftest import CraftedCorpus, wait_for_report

pytestmark = pytest.mark.integration
SECTIONS = [
    "Claim Under Review",
    "Corroborating Evidence",
    "Contradicting Evidence",
    "Nuances and Conditions",
    "Confidence Assessment",
]


def papers(key: str, n: int, prefix: str = "corpus") -> list[dict[str, str]]:
    return [
        {
            "paper_id": f"{prefix}:{key}-{i}",
            "title": f"A trial of {key} number {i}",
            "passage": f"In trial {i}, {key} changed the outcome in adult patients. Follow-up lasted two years.",
        }
        for i in range(n)
    ]


def labels(key: str, *stances: tuple[str, float], prefix: str = "corpus") -> Behaviour:
    rows = [
        {
            "paper_id": f"{prefix}:{key}-{i}",
            "label": label,
            "strength": strength,
            "sentence": f"In trial {i}, {key} changed the outcome in adult patients.",
        }
        for i, (label, strength) in enumerate(stances)
    ]
    return Behaviour(text=json.dumps({"labels": rows}))


async def verify(js: JetStreamContext, claim: str, **fields: object) -> RequestVerification:
    command = RequestVerification(claim=claim, origin="bus", **fields)
    await js.publish(
        subjects.VERIFY_REQUESTED,
        command.model_dump_json().encode(),
        headers={
            subjects.MSG_ID_HEADER: f"verify-{command.verification_id}-{command.effective_run_id()}"
        },
    )
    return command


async def stored(sessions, verification_id: uuid.UUID):
    async with sessions() as session:
        return await UnitOfWork(session, service="test").reports.version(verification_id)


async def reverify_now(servers, sessions, verification_id: uuid.UUID) -> str:
    """A month passes: the watched claim falls due and the replicator's run sends it to the verifier;
    returns the re-verification's run id."""
    async with sessions.begin() as session:
        await session.execute(
            update(WatchedClaimRow)
            .where(WatchedClaimRow.verification_id == verification_id)
            .values(next_due_at=datetime.now(UTC) - timedelta(minutes=1))
        )
    broker = NatsBroker(servers.nats_url)
    await broker.start()
    try:
        assert await request_due(Ledger(sessions), limit=100) >= 1
        assert await request_due(Ledger(sessions), limit=100) == 0, (
            "a requested claim is not asked for twice"
        )
        await broker_relay(sessions, broker).drain()  # the commands leave after their commit
    finally:
        await broker.stop()
    async with sessions() as session:
        watched = await UnitOfWork(session, service="test").watched.get(verification_id)
        assert watched is not None
        run_id = watched.requested_run_id
    assert run_id
    return run_id


async def watch_findings(sessions, verification_id: uuid.UUID) -> list[FindingView]:
    async with sessions() as session:
        return await Findings(session, "replicator").open_for_claims([verification_id])


@pytest.mark.parametrize(
    ("stances", "verdict", "confidence"),
    [
        ((("SUPPORTS", 0.97), ("SUPPORTS", 0.85), ("SUPPORTS", 0.8)), "STRONGLY SUPPORTED", "HIGH"),
        ((("SUPPORTS", 0.9), ("QUALIFIES", 0.8)), "PARTIALLY SUPPORTED", "MODERATE"),
        ((("SUPPORTS", 0.8), ("CONTRADICTS", 0.8)), "MIXED EVIDENCE", "LOW"),
        ((("CONTRADICTS", 0.6),), "WEAKLY CONTRADICTED", "LOW"),
        (
            (("CONTRADICTS", 0.97), ("CONTRADICTS", 0.8), ("CONTRADICTS", 0.75)),
            "CONTRADICTED",
            "HIGH",
        ),
        ((("UNRELATED", 0.9), ("SUPPORTS", 0.2)), "INSUFFICIENT EVIDENCE", "LOW"),
    ],
)
async def test_each_verdict_from_crafted_evidence(
    stances,
    verdict,
    confidence,
    js,
    sessions,
    crafted: CraftedCorpus,
    llm_server: FakeLLMServer,
    verifier_service: FastStream,
) -> None:
    key = f"zorbamycin{uuid.uuid4().hex[:6]}"
    crafted.papers[key] = papers(key, len(stances))
    llm_server.queue("openai", labels(key, *stances))
    command = await verify(js, f"{key} reduces fever in adults")
    row = await wait_for_report(sessions, command.verification_id)
    assert row.status == "completed", row.error
    version = await stored(sessions, command.verification_id)
    assert (version.review["verdict"], version.review["confidence"]) == (verdict, confidence)
    assert f"Verdict: {verdict} · Confidence: {confidence}" in version.markdown, (
        "the headline is one line"
    )
    for title in [*SECTIONS, "References"]:
        assert f"{title}" in version.markdown
    assert version.citation_check["ok"], version.citation_check
    queries = [q for q in crafted.queries if key in q]
    assert len(queries) >= 3, "at least three differently worded searches per statement"
    async with sessions() as session:
        audits = (
            await session.scalars(
                select(AuditEvent).where(AuditEvent.claim_id == command.verification_id)
            )
        ).all()
    done = [a for a in audits if a.action == "research.verification.completed"]
    assert done and done[0].payload["verdict"] == verdict and done[0].payload["duration_s"] >= 0
    events = [e async for _, e in replay(js, command.effective_run_id())]
    kinds = [e.type for e in events]
    assert "tool_call" in kinds and "verdict" in kinds and kinds[-1] == "done"


async def test_offline_classifier_verifies_a_supported_claim(
    js,
    sessions,
    crafted: CraftedCorpus,
    verifier_service: FastStream,
) -> None:
    key = "vitaminq"
    crafted.papers[key] = [
        {
            "paper_id": f"corpus:vq-{i}",
            "title": f"Vitaminq and fracture risk, cohort {i}",
            "passage": f"Vitaminq supplementation reduced the risk of hip fracture in older adults. Cohort {i} enrolled volunteers.",
        }
        for i in range(3)
    ]
    command = await verify(
        js, "Vitaminq supplementation reduces the risk of hip fracture in older adults"
    )
    row = await wait_for_report(sessions, command.verification_id)
    assert row.status == "completed", row.error
    version = await stored(sessions, command.verification_id)
    assert version.review["verdict"] in ("STRONGLY SUPPORTED", "PARTIALLY SUPPORTED"), (
        version.review
    )
    assert version.review["supporting_sources"] >= 1 and version.citation_check["ok"]


async def test_a_compound_claim_is_split_into_statements(
    js,
    sessions,
    crafted: CraftedCorpus,
    verifier_service: FastStream,
) -> None:
    command = await verify(
        js, "Aspirin reduces stroke risk and increases gastrointestinal bleeding"
    )
    row = await wait_for_report(sessions, command.verification_id)
    assert row.status == "completed", row.error
    version = await stored(sessions, command.verification_id)
    statements = version.content["metadata"]["statements"]
    assert len(statements) == 2 and "bleeding" in statements[1] and "stroke" in statements[0]
    assert version.review["verdict"] == "INSUFFICIENT EVIDENCE", (
        "nothing in the crafted corpus matches"
    )
    assert "S2:" in version.markdown


async def test_a_fabricated_reference_from_the_llm_is_dropped(
    js,
    sessions,
    crafted: CraftedCorpus,
    llm_server: FakeLLMServer,
    verifier_service: FastStream,
) -> None:
    key = f"quenzol{uuid.uuid4().hex[:6]}"
    crafted.papers[key] = papers(key, 1)
    answer = json.loads(labels(key, ("SUPPORTS", 0.9)).text or "{}")
    answer["labels"].append(
        {
            "paper_id": "pmid:99999999",
            "label": "SUPPORTS",
            "strength": 0.95,
            "sentence": f"A landmark trial proved that {key} reduces fever in every patient.",
        }
    )
    llm_server.queue("openai", Behaviour(text=json.dumps(answer)))
    command = await verify(js, f"{key} reduces fever in adults")
    row = await wait_for_report(sessions, command.verification_id)
    assert row.status == "completed", row.error
    version = await stored(sessions, command.verification_id)
    refs = [r["paper_id"] for r in version.content["references"]]
    assert "pmid:99999999" not in refs and refs == [f"corpus:{key}-0"]
    assert "landmark trial" not in version.markdown
    assert version.review["verdict"] == "PARTIALLY SUPPORTED", (
        "one real supporting source, the invented one refused"
    )
    async with sessions() as session:
        saved = (
            await session.scalars(
                select(AuditEvent).where(AuditEvent.action == "research.report.version_saved")
            )
        ).all()
    mine = [a for a in saved if a.subject_ids.get("report_id") == str(command.verification_id)]
    assert mine and mine[0].payload["dropped_by_citation_check"] == 1


async def test_a_watched_claim_reverified_after_its_evidence_changes(
    js,
    nc,
    servers,
    sessions,
    crafted: CraftedCorpus,
    llm_server: FakeLLMServer,
    verifier_service: FastStream,
) -> None:
    key = f"lumidrine{uuid.uuid4().hex[:6]}"
    crafted.papers[key] = papers(key, 2)
    llm_server.queue("openai", labels(key, ("SUPPORTS", 0.9), ("SUPPORTS", 0.8)))
    command = await verify(js, f"{key} reduces fever in adults", watch=True)
    await wait_for_report(sessions, command.verification_id)
    async with sessions() as session:
        assert (
            await UnitOfWork(session, service="test").watched.get(command.verification_id)
            is not None
        )
    changes: asyncio.Queue[VerificationChanged] = asyncio.Queue()

    async def on_changed(msg) -> None:
        changes.put_nowait(VerificationChanged.model_validate_json(msg.data))

    sub = await nc.subscribe(subjects.VERIFICATION_CHANGED, cb=on_changed)
    try:
        assert await watch_findings(sessions, command.verification_id) == [], (
            "a first verdict is no change"
        )
        # The evidence changes: the same papers now read against the claim.
        llm_server.queue("openai", labels(key, ("CONTRADICTS", 0.9), ("CONTRADICTS", 0.8)))
        run_id = await reverify_now(servers, sessions, command.verification_id)
        await wait_for_report(sessions, command.verification_id, version=2)
        changed = await asyncio.wait_for(changes.get(), 60)
    finally:
        await sub.unsubscribe()
    assert (changed.previous_verdict, changed.verdict) == ("STRONGLY SUPPORTED", "CONTRADICTED")
    async with sessions() as session:
        history = await UnitOfWork(session, service="test").watched.history(command.verification_id)
        audits = (
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.claim_id == command.verification_id,
                    AuditEvent.action == "research.verification.verdict_changed",
                )
            )
        ).all()
        watch = await UnitOfWork(session, service="test").watched.get(command.verification_id)
    assert [h.verdict for h in history] == ["STRONGLY SUPPORTED", "CONTRADICTED"]
    assert (
        audits
        and audits[0].payload["previous"] == "STRONGLY SUPPORTED"
        and audits[0].payload["verdict"] == "CONTRADICTED"
    )
    assert watch is not None and watch.requested_run_id is None and watch.runs == 2
    (finding,) = await watch_findings(sessions, command.verification_id)
    assert (
        finding.kind == "verdict_changed"
        and finding.expires_at - finding.created_at == timedelta(days=180)
    )
    assert (finding.payload["previous_verdict"], finding.payload["verdict"]) == (
        "STRONGLY SUPPORTED",
        "CONTRADICTED",
    )
    assert audits[0].subject_ids["finding_id"] == str(finding.finding_id)
    events = [e async for _, e in replay(js, run_id)]
    verdicts = [e for e in events if e.type == "verdict"]
    assert verdicts and verdicts[0].details["previous_verdict"] == "STRONGLY SUPPORTED"
    assert verdicts[0].details["finding_id"] == str(finding.finding_id)


async def test_a_retracted_source_of_a_watched_claim_is_a_change_and_a_finding(
    js,
    nc,
    servers,
    sessions,
    crafted: CraftedCorpus,
    llm_server: FakeLLMServer,
    verifier_service: FastStream,
) -> None:
    key = f"retraxol{uuid.uuid4().hex[:6]}"
    crafted.papers[key] = papers(key, 4)
    four = (("SUPPORTS", 0.98), ("SUPPORTS", 0.97), ("SUPPORTS", 0.8), ("SUPPORTS", 0.8))
    llm_server.queue("openai", labels(key, *four))
    command = await verify(js, f"{key} reduces fever in adults", watch=True)
    await wait_for_report(sessions, command.verification_id)
    first = await stored(sessions, command.verification_id)
    assert (first.review["verdict"], first.review["confidence"]) == ("STRONGLY SUPPORTED", "HIGH")
    doomed = f"corpus:{key}-0"
    assert doomed in [r["paper_id"] for r in first.content["references"]]
    changes: asyncio.Queue[VerificationChanged] = asyncio.Queue()

    async def on_changed(msg) -> None:
        changes.put_nowait(VerificationChanged.model_validate_json(msg.data))

    sub = await nc.subscribe(subjects.VERIFICATION_CHANGED, cb=on_changed)
    try:
        # The ledger learns that one cited paper was retracted (as a connector's metadata or the
        # replicator records it); the papers still read the same, three others still support the claim.
        async with sessions.begin() as session:
            session.add(
                ResearchSource(
                    source_id=doomed, source="corpus", title="retracted trial", retracted=True
                )
            )
        llm_server.queue("openai", labels(key, *four))
        run_id = await reverify_now(servers, sessions, command.verification_id)
        await wait_for_report(sessions, command.verification_id, version=2)
        changed = await asyncio.wait_for(changes.get(), 60)
    finally:
        await sub.unsubscribe()
    again = await stored(sessions, command.verification_id)
    assert (again.review["verdict"], again.review["confidence"]) == (
        "STRONGLY SUPPORTED",
        "HIGH",
    ), "three sources remain, the strongest at 0.97"
    assert doomed not in [r["paper_id"] for r in again.content["references"]], (
        "a retracted paper is no evidence"
    )
    assert again.review["supporting_sources"] == 3
    assert (
        changed.retracted_sources == [doomed]
        and changed.previous_verdict == changed.verdict == "STRONGLY SUPPORTED"
    )
    (finding,) = await watch_findings(sessions, command.verification_id)
    assert finding.kind == "retracted_source" and finding.payload["retracted_sources"] == [doomed]
    assert finding.payload["run_id"] == run_id
    events = [e async for _, e in replay(js, run_id)]
    assert any(e.type == "reasoning" and doomed in e.text for e in events), (
        "the trace says what was left out"
    )
    (verdict,) = [e for e in events if e.type == "verdict"]
    assert verdict.details["finding_kind"] == "retracted_source" and verdict.details[
        "retracted_sources"
    ] == [doomed]


async def test_a_source_an_outside_connector_reports_retracted_is_a_change(
    js,
    nc,
    servers,
    sessions,
    crafted: CraftedCorpus,
    llm_server: FakeLLMServer,
    verifier_service: FastStream,
) -> None:
    """PubMed (like CrossRef, Europe PMC, OpenAlex) reports a retraction as `metadata.retracted` on its hit."""
    key = f"pubretra{uuid.uuid4().hex[:6]}"
    retracted: set[str] = set()

    async def on_search(msg) -> None:
        request = SearchEvidence.model_validate_json(msg.data)
        hits = [
            SourceHit(
                source_id=p["paper_id"],
                source="pubmed",
                title=p["title"],
                abstract=p["passage"],
                metadata={"retracted": p["paper_id"] in retracted},
            )
            # the query an outside source receives is built by the outbound allow-list: the made-up key
            # (not a scientific term) stays home, the claim's scientific words go out
            for p in papers(key, 3, "pmid")
            if "fever" in request.query and key not in request.query
        ]
        await msg.respond(EvidenceFound(hits=hits).model_dump_json().encode())

    search = await nc.subscribe(subjects.CONNECTOR_SEARCH, cb=on_search)
    changes: asyncio.Queue[VerificationChanged] = asyncio.Queue()

    async def on_changed(msg) -> None:
        changes.put_nowait(VerificationChanged.model_validate_json(msg.data))

    sub = await nc.subscribe(subjects.VERIFICATION_CHANGED, cb=on_changed)
    three = (("SUPPORTS", 0.97), ("SUPPORTS", 0.85), ("SUPPORTS", 0.7))
    try:
        llm_server.queue("openai", labels(key, *three, prefix="pmid"))
        command = await verify(js, f"{key} reduces fever in adults", watch=True, sources=["pubmed"])
        await wait_for_report(sessions, command.verification_id)
        first = await stored(sessions, command.verification_id)
        assert (first.review["verdict"], first.review["confidence"]) == (
            "STRONGLY SUPPORTED",
            "HIGH",
        ), first.review
        retracted.add(f"pmid:{key}-0")
        llm_server.queue("openai", labels(key, *three, prefix="pmid"))
        await reverify_now(servers, sessions, command.verification_id)
        await wait_for_report(sessions, command.verification_id, version=2)
        changed = await asyncio.wait_for(changes.get(), 60)
    finally:
        await sub.unsubscribe()
        await search.unsubscribe()
    assert changed.retracted_sources == [f"pmid:{key}-0"]
    assert (changed.verdict, changed.confidence) == ("STRONGLY SUPPORTED", "MODERATE"), (
        "two sources remain, one of them at 0.80 or more"
    )
    (finding,) = await watch_findings(sessions, command.verification_id)
    assert finding.kind == "retracted_source" and finding.payload["previous_confidence"] == "HIGH"
