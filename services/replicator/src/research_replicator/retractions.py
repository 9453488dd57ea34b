"""Retractions: one event marks everything that rests on a retracted work, set-based, at once.

A `SourcesRetracted` event on `research.source.retracted` (a CrossRef / Retraction Watch notice, a
PubMed retracted record, or this replicator's own re-run when a fresh hit says a cited source is
retracted) is handled in one transaction through the ledger:

    uow.claims.retract_sources     research_sources.retracted = true
    uow.claims.citing              the active claims whose supports cite one (one scan)
    uow.findings                   a `retracted_source` finding per such claim not already
                                   carrying an open one (replicator's name), with its audit row
    uow.reports.mark_stale_citing  every completed report (review, verification, source list)
                                   whose current version cites one or rests on such a claim →
                                   `stale`, reason `cited source <id> retracted`
    uow.watched.make_due           the watched claims among those verifications fall due now
    uow.recritiques.hold           a held re-critique per new finding

After the commit: the held re-critiques there is room for are released through the outbox
(`recritiques.release`:
at most `recritique_in_flight` on the critic's queue and unjudged at once; the replicator's tick
releases the rest; `Nats-Msg-Id` `recritique-<finding_id>`, so a redelivered event repeats
nothing), and each stale report's run hears `STALE` (`research_runs.tell_stale`, best effort, as
the reviewer's sweep). The re-verifications are not sent here either: the watched-claim
dispatcher (`watched.dispatch_forever`) asks for them at most `watched_in_flight` at a time. A
wave of thousands queues in the ledger, not on the bus.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from nats.js import JetStreamContext

from research_contracts import SourcesRetracted
from research_ledger import AuditAction, Ledger, Recritique, StaleReport
from research_ledger.findings import NewFinding
from research_platform.logging import get_logger
from research_replicator import recritiques
from research_replicator.experiment import RETRACTED_SOURCE
from research_replicator.repository import SERVICE
from research_runs import StaleNotice, tell_stale

log = get_logger(__name__)


@dataclass
class Propagation:
    """What one retraction event changed."""

    newly_retracted: list[str] = field(default_factory=list)
    claims: int = 0
    findings: dict[uuid.UUID, uuid.UUID] = field(default_factory=dict)  # claim → finding
    stale: list[StaleReport] = field(default_factory=list)
    watched_due: int = 0

    def counts(self) -> dict[str, int]:
        return {
            "sources": len(self.newly_retracted),
            "claims": self.claims,
            "findings": len(self.findings),
            "stale_reports": len(self.stale),
            "watched_due": self.watched_due,
        }


async def propagate(ledger: Ledger, event: SourcesRetracted) -> Propagation:
    """The ledger side of a retraction, in one unit of work (see the module docstring)."""
    ids = sorted(set(event.source_ids))
    out = Propagation()
    async with ledger.unit_of_work(service=SERVICE) as uow:
        out.newly_retracted = await uow.claims.retract_sources(ids)
        citing = await uow.claims.citing(ids)
        out.claims = len(citing)
        findings = uow.findings
        already = {
            c
            for f in await findings.open_for_claims(list(citing), kinds=[RETRACTED_SOURCE])
            for c in f.claim_ids
        }
        new = [c for c in citing if c not in already]
        payload = {"origin": event.origin, "notice": event.notice, "event_id": str(event.event_id)}
        finding_ids = await findings.record_many(
            NewFinding(
                RETRACTED_SOURCE, [c], {**payload, "retracted": citing[c], "basis": "retraction"}
            )
            for c in new
        )
        out.findings = dict(zip(new, finding_ids, strict=True))
        await uow.recritiques.hold(
            Recritique(claim_id, finding_id, RETRACTED_SOURCE)
            for claim_id, finding_id in out.findings.items()
        )
        for claim_id, finding_id in out.findings.items():
            uow.audit(
                AuditAction.REPLICATOR_FINDING,
                claim_id=claim_id,
                subject_ids={"finding_id": finding_id, "event_id": event.event_id},
                payload={"verdict": RETRACTED_SOURCE, "retracted": citing[claim_id], **payload},
            )
        out.stale = await uow.reports.mark_stale_citing(ids, citing)
        out.watched_due = await uow.watched.make_due(
            [r.report_id for r in out.stale if r.kind == "verification"]
        )
    return out


async def handle(
    ledger: Ledger,
    js: JetStreamContext,
    event: SourcesRetracted,
    *,
    in_flight: int,
    run_events: Any = None,
) -> Propagation:
    """One `SourcesRetracted`: the ledger side, the first held re-critiques released through the
    outbox (at most `in_flight` unjudged), then the stale runs' events through `run_events` (the
    declared run-event publisher; None: `js` directly)."""
    out = await propagate(ledger, event)
    log.info("sources retracted", origin=event.origin, **out.counts())
    try:
        await recritiques.release(ledger, in_flight=in_flight)
    except Exception as exc:  # noqa: BLE001 - they are held in the ledger: the tick sends them
        log.warning("re-critiques left for the next release", error=repr(exc))
    await tell_stale(
        js,
        (StaleNotice(r.run_id, r.run_details(origin=event.origin)) for r in out.stale),
        publisher=run_events,
    )
    return out
