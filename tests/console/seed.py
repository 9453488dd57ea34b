"""Ledger records the console's record pages show, written the way the services write them
(`research_ledger`): a review refreshed once then gone stale, a watched claim with two verdicts, a
verification with its closest evidence, judge and LLM check."""

from __future__ import annotations

import uuid
from typing import Any

from research_ledger import UnitOfWork
from research_reports import Finding, Quote, Reference, Report, Section, diff_reports
from research_reports.citations import CitationCheck, CitationIssue, IssueKind
from tests.reports.sample import review

WATCHED_VERDICTS = ("INSUFFICIENT EVIDENCE", "PARTIALLY SUPPORTED")


async def stale_review_with_a_refresh(sessions: Any, topic: str) -> tuple[uuid.UUID, uuid.UUID]:
    """A review at version 2 (its refresh diff stored) gone stale, and a completed one; their ids."""
    stale_id, fresh_id, claim_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    first, second = review(), review()
    first.version, second.version = 1, 2
    second.references = second.references[:2]  # the refresh dropped a reference
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        for report_id, subject in ((stale_id, f"{topic} stale"), (fresh_id, f"{topic} fresh")):
            await ledger.reports.open(
                report_id,
                kind="review",
                run_id=f"rv-{report_id.hex[:12]}",
                subject=subject,
                subject_key=subject,
            )
            await ledger.reports.save_version(
                report_id,
                run_id=f"rv-{report_id.hex[:12]}",
                content=first.model_dump(mode="json"),
                markdown="# v1",
                claim_ids=[claim_id] if report_id == stale_id else [],
            )
            await ledger.reports.complete(report_id)
        await ledger.reports.refresh(stale_id, run_id=f"rv-{stale_id.hex[:12]}-2")
        await ledger.reports.save_version(
            stale_id,
            run_id=f"rv-{stale_id.hex[:12]}-2",
            content=second.model_dump(mode="json"),
            markdown="# v2",
            claim_ids=[claim_id],
            diff=diff_reports(first, second).model_dump(mode="json"),
        )
        await ledger.reports.complete(stale_id)
        await ledger.reports.mark_stale(claim_id, "claim superseded")
    return stale_id, fresh_id


async def watched_claim_with_history(sessions: Any, unique: str) -> tuple[uuid.UUID, uuid.UUID]:
    """A watched claim (every 7 days) verified twice (`WATCHED_VERDICTS`, run ids vf-1-/vf-2-<unique>),
    and a verification nobody watches; their ids."""
    watched_id, unwatched_id = uuid.uuid4(), uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        for report_id in (watched_id, unwatched_id):
            await ledger.reports.open(
                report_id,
                kind="verification",
                run_id=f"vf-{report_id.hex[:12]}",
                subject=f"claim {unique}",
                subject_key=f"claim {unique}",
            )
        await ledger.watched.watch(
            watched_id, f"Ketoplex lowers blood pressure {unique}", interval_days=7
        )
    for run, verdict in zip(("vf-1", "vf-2"), WATCHED_VERDICTS, strict=True):
        async with (
            sessions() as session,
            session.begin(),
        ):  # one transaction per run: recorded_at orders them
            await UnitOfWork(session, service="test").watched.record_verdict(
                watched_id, f"{run}-{unique}", verdict, "LOW"
            )
    return watched_id, unwatched_id


NEAR_MISS = "one small uncontrolled study"
LLM_REASON = "the pilot's volunteers were not hypertensive"


async def verification_with_closest_evidence(sessions: Any, claim: str) -> uuid.UUID:
    """A completed verification whose report holds a "Closest Evidence (not counted)" finding (its
    quote is the finding word for word), a citation check with one quote not found verbatim, the
    judge's version and an LLM check that disagrees — the fields the verifier writes; its id."""
    report_id = uuid.uuid4()
    pilot = "Ketoplex lowered systolic pressure in 12 volunteers."
    report = Report(
        title=f"Claim verification: {claim}",
        kind="verification",
        sections=[
            Section(
                title="Closest Evidence (not counted)",
                findings=[
                    Finding(
                        id="closest:corpus:1:0",
                        statement=pilot,
                        tag="NOT COUNTED",
                        citations=[1],
                        group=f"Statement 1: {claim} — leans support, P 0.41, bar 0.60: {NEAR_MISS}",
                        quotes=[Quote(reference_id=1, text=pilot)],
                    )
                ],
            )
        ],
        references=[Reference(id=1, title="A pilot study", paper_id="corpus:1", source_text=pilot)],
        metadata={
            "judge": "abstract-test/rules-1",
            "llm_check": {
                "ran": True,
                "agrees": False,
                "answer": "CONTRADICTED",
                "reason": LLM_REASON,
            },
        },
    )
    check = CitationCheck(
        quotes=2,
        verbatim_quotes=1,
        citations=1,
        supported_citations=1,
        issues=[
            CitationIssue(
                kind=IssueKind.unsupported,
                reason="quote_not_verbatim",
                sentence="Ketoplex halved blood pressure.",
                section="Closest Evidence (not counted)",
                reference_id=1,
            )
        ],
    )
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        run_id = f"vf-{report_id.hex[:12]}"
        await ledger.reports.open(
            report_id, kind="verification", run_id=run_id, subject=claim, subject_key=claim
        )
        await ledger.reports.save_version(
            report_id,
            run_id=run_id,
            content=report.model_dump(mode="json"),
            markdown=report.render_markdown(),
            citation_check=check.model_dump(mode="json") | {"ok": True},
            review={"verdict": "INSUFFICIENT EVIDENCE", "confidence": "LOW", "coverage": 0.0},
        )
        await ledger.reports.complete(report_id)
    return report_id


async def many_reviews(sessions: Any, topic: str, count: int) -> list[uuid.UUID]:
    """`count` reviews opened (each with its `research.report.opened` audit row) titled
    "<topic> <n>"; their ids."""
    ids = [uuid.uuid4() for _ in range(count)]
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        for n, report_id in enumerate(ids):
            await ledger.reports.open(
                report_id,
                kind="review",
                run_id=f"rv-{report_id.hex[:12]}",
                subject=f"{topic} {n}",
                subject_key=f"{topic} {n}",
            )
    return ids
