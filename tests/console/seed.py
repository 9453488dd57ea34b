"""Ledger records the console's record pages show, written the way the services write them
(`research_ledger`): a review refreshed once then gone stale, a watched claim with two verdicts."""

from __future__ import annotations

import uuid
from typing import Any

from research_ledger import Ledger
from research_reports import diff_reports
from tests.reports.sample import review

WATCHED_VERDICTS = ("INSUFFICIENT EVIDENCE", "PARTIALLY SUPPORTED")


async def stale_review_with_a_refresh(sessions: Any, topic: str) -> tuple[uuid.UUID, uuid.UUID]:
    """A review at version 2 (its refresh diff stored) gone stale, and a completed one; their ids."""
    stale_id, fresh_id, claim_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    first, second = review(), review()
    first.version, second.version = 1, 2
    second.references = second.references[:2]  # the refresh dropped a reference
    async with sessions() as session, session.begin():
        ledger = Ledger(session, service="test")
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
        ledger = Ledger(session, service="test")
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
            await Ledger(session, service="test").watched.record_verdict(
                watched_id, f"{run}-{unique}", verdict, "LOW"
            )
    return watched_id, unwatched_id
