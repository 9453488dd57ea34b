"""One verification run, start to finish.

prepare (parse the claim) → open the report (idempotent; a scheduled re-verification moves a
finished one back to `running` under its new run) → search, judge, qualify (`experiment`),
traced on `research.run.<run_id>.event` → the report through the citation checker (`reshape`)
→ persist (version + `completed` + audit, one unit of work) → `verdict`, `result`, `done`.
Sources the ledger knows retracted (`research_sources.retracted`) or an outside connector reports
retracted are never evidence. For a re-verification whose verdict or confidence moved, or whose
earlier sources are now retracted, it also records a finding (kind `verdict_changed` or
`retracted_source`) with a `verdict_changed` audit row and the `research.verification.changed` event (the ledger's
outbox, published after the commit) in the run's transaction, and adds the change to the
`verdict` run event; the verdicts stay in
the history (`verification_verdicts`) and in the report's versions.

Idempotent under redelivery: a run that already saved its version does nothing; a command for a
run that is no longer the report's current one is ignored. A corpus search that did not answer
is transient (redelivered); anything else fails the report visibly with the reason
(`research_modes.mode_run`). Outside sources fail soft: the ones that were down are told in the
trace, named in the report's metadata (`sources_down`) and audited (`research.report.sources_down`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import structlog
from faststream.nats import NatsBroker

from research_contracts import subjects
from research_contracts.verifications import RequestVerification, VerificationChanged
from research_ledger import Ledger
from research_modes import mode_run, runs_now
from research_platform.errors import PrepareError
from research_platform.logging import get_logger
from research_verification import LabelledPassage, PassageStance, Verdict, decide_verdict
from research_verifier import prepare, repository, reshape
from research_verifier.experiment import Engine, Previous, change, gather, judge_version
from research_verifier.repository import SERVICE
from research_verifier.settings import VerifierSettings
from research_verifier.tools import EvidencePort, Searcher
from research_verifier.veto import CheckResult, LlmCheck

log = get_logger(__name__)


@dataclass
class VerificationService:
    broker: NatsBroker
    ledger: Ledger
    settings: VerifierSettings
    port: EvidencePort
    engine: Engine
    run_events: Any = None  # the declared run-event publisher (None: the JetStream context)
    check: LlmCheck | None = None  # the LLM's veto on direction, when one is configured

    async def handle(self, command: RequestVerification) -> None:
        try:
            job = prepare.verification_job(command)
        except PrepareError as exc:
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                await uow.reports.fail(command.verification_id, str(exc))
            raise
        with structlog.contextvars.bound_contextvars(
            verification_id=str(job.verification_id), run_id=job.run_id
        ):
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                row = await repository.open_verification(
                    uow, job, watch_days=self.settings.watch_days
                )
                done = await uow.reports.version_of_run(job.verification_id, job.run_id)
                previous = await repository.previous_verdict(uow, job.verification_id)
            if done is not None:
                log.info("run already saved its version", version=done.version)
                return
            if not runs_now(row, job.run_id):
                return
            await self.run(job, previous)

    async def run(self, job: prepare.VerificationJob, previous: Previous | None) -> None:
        started = time.monotonic()
        config = self.settings
        async with mode_run(
            self.broker.connection.jetstream(),
            self.ledger,
            service=SERVICE,
            kind="verification",
            report_id=job.verification_id,
            run_id=job.run_id,
            publisher=self.run_events,
        ) as run:
            recorder = run.recorder
            searcher = Searcher(
                run.port(self.port),
                recorder,
                k=config.passages_per_query,
                filters=job.filters,
                outside=job.outside_sources,
            )
            evidence, _ = await gather(job, self.engine, searcher, recorder, config)
            run.sources.check()
            # the ledger's retractions: never evidence, and a change
            async with self.ledger.reading(service=SERVICE) as uow:
                known = await uow.sources.retracted(
                    set(evidence.passages) | (previous.sources if previous else frozenset())
                )
            if known - evidence.retracted:
                await recorder.reasoning(
                    f"Retracted, not counted as evidence: {', '.join(sorted(known - evidence.retracted))}"
                )
            evidence.retracted |= known
            chosen = evidence.best()
            not_counted = evidence.not_counted()
            checked_by_llm: CheckResult | None = None
            if self.check is not None:
                chosen, not_counted, checked_by_llm = await vetoed(
                    self.check, job.claim, chosen, not_counted, len(job.statements)
                )
                await recorder.reasoning(checked_by_llm.reason)
            vetoed_all = (
                checked_by_llm is not None and checked_by_llm.ran and not checked_by_llm.agrees
            )
            why_nothing = (
                ""
                if chosen
                else f"- {checked_by_llm.reason}."
                if vetoed_all and checked_by_llm is not None
                else reshape.nothing_found(
                    job,
                    evidence.searches,
                    len(evidence.passages),
                    evidence.closest(),
                    getattr(self.engine, "bar", None),
                )
            )
            if why_nothing and not vetoed_all:
                await recorder.reasoning(why_nothing.removeprefix("- "))
            report, assessment, check, dropped = reshape.checked(
                job,
                chosen,
                evidence.passages,
                engine=self.engine.name,
                searches=evidence.searches,
                quotes_per_side=config.quotes_per_side,
                why_nothing=why_nothing,
                not_counted=not_counted,
            )
            report.metadata.update(run.sources.metadata())
            judge = judge_version(self.engine)
            report.metadata["judge"] = judge
            if checked_by_llm is not None:
                report.metadata["llm_check"] = checked_by_llm.metadata()
            cited = {r.paper_id or "" for r in report.references}
            moved = change(previous, assessment, evidence.retracted, judge)
            finding_id = None
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                version = await repository.finish(
                    uow,
                    job,
                    report,
                    assessment,
                    check,
                    duration_s=time.monotonic() - started,
                    counts={
                        "statements": len(job.statements),
                        "searches": evidence.searches,
                        "passages": len(evidence.passages),
                        "qualifier_searches": evidence.qualifier_searches,
                        "dropped_by_citation_check": dropped,
                        "cited_sources": len(cited),
                    },
                    judge=judge,
                )
                run.audit_sources(uow)
                if moved is not None:
                    finding_id = await repository.verdict_changed(
                        uow, job, reshape.finding(job, moved), moved
                    )
                    uow.outbox.add(
                        subjects.VERIFICATION_CHANGED,
                        VerificationChanged(
                            verification_id=job.verification_id,
                            claim=job.claim,
                            run_id=job.run_id,
                            previous_verdict=moved.previous_verdict,
                            previous_confidence=moved.previous_confidence,
                            verdict=moved.verdict,
                            confidence=moved.confidence,
                            retracted_sources=moved.retracted_sources,
                            cause=moved.cause,
                            previous_judge=moved.previous_judge,
                            judge=moved.judge,
                        ),
                        msg_id=f"verification-changed-{job.run_id}",
                    )
            await recorder.verdict(
                str(assessment.verdict),
                confidence=str(assessment.confidence),
                details={
                    "headline": assessment.headline,
                    "version": version,
                    "dropped_by_citation_check": dropped,
                    **(
                        {
                            **moved.payload(),
                            "changed": True,
                            "finding_kind": moved.kind,
                            "finding_id": str(finding_id),
                        }
                        if moved is not None
                        else {}
                    ),
                },
            )
            await recorder.result(
                report=report.model_dump(mode="json"),
                review={
                    "verdict": str(assessment.verdict),
                    "confidence": str(assessment.confidence),
                    "citation_ok": not check.blocking,
                },
            )
        if run.failed:
            return
        log.info(
            "verification completed",
            verdict=str(assessment.verdict),
            confidence=str(assessment.confidence),
        )


async def vetoed(
    check: LlmCheck,
    claim: str,
    chosen: list[LabelledPassage],
    not_counted: list[LabelledPassage],
    statements: int,
) -> tuple[list[LabelledPassage], list[LabelledPassage], CheckResult]:
    """The LLM asked about the quotes of a SUPPORTED or CONTRADICTED verdict: when it disagrees,
    nothing counts (the verdict becomes INSUFFICIENT EVIDENCE) and the quotes move to the closest
    evidence with its reading as the reason; it never flips a verdict. Other verdicts are not asked."""
    verdict = decide_verdict(chosen, statements).verdict
    side = (
        PassageStance.SUPPORTS
        if verdict in (Verdict.STRONGLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED)
        else PassageStance.CONTRADICTS
        if verdict in (Verdict.WEAKLY_CONTRADICTED, Verdict.CONTRADICTED)
        else None
    )
    if side is None:
        return (
            chosen,
            not_counted,
            CheckResult(False, True, "", f"the LLM check was not asked ({verdict})"),
        )
    own = [
        p
        for p in chosen
        if p.label is side
        or (side is PassageStance.SUPPORTS and p.label is PassageStance.QUALIFIES)
    ]
    quotes = [p.text for p in sorted(own, key=lambda p: -p.strength) if p.text][:3]
    result = await check.check(
        claim, "SUPPORTS" if side is PassageStance.SUPPORTS else "CONTRADICTS", quotes
    )
    if result.agrees:
        return chosen, not_counted, result
    moved = [
        replace(
            p,
            label=PassageStance.UNRELATED,
            leaning="SUPPORT" if p.label is not PassageStance.CONTRADICTS else "CONTRADICT",
            bar=p.strength,
            reason=result.reason,
        )
        for p in chosen
        if p.text
    ]
    return [], moved + not_counted, result
