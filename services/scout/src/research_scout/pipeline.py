"""One source-list run: prepare → the refinement loop (search, judge, refine) → detail → reshape →
store the snapshot + diff, and `research.sourcelist.updated` in the ledger's outbox (one
transaction; published after the commit by the mode's relay).

The loop (seed 004): each iteration asks the connector service (request/reply
`research.connector.search`, the routed sources) with the current query, labels every new hit
strong / partial / irrelevant, writes the feedback memo from the non-strong rationales and
builds the next query from it; it stops on enough strong hits (the number of references
asked for), the iteration cap, or an empty / repeated query. Every iteration (query, counts,
memo, stop reason) and every judgement is persisted (`source_list_iterations` /
`source_list_judgements`) and emitted as run events on `research.run.<run_id>.event`
(`tool_call` / `tool_result` per search, one `verdict` per judgement, `reasoning` for the memo).

The search is `research_modes.ConnectorClient.search` (one failure policy for every mode: a
connector not subscribed yet is waited for, a source that gave nothing is `degraded`, told in the
trace, named in the report's metadata and audited). A run whose every source failed is not an
empty list: it fails with the reason. A failed run marks the report and the run `failed` (with the
reason) and ends its events with `done(failed)`; it is not retried by the bus — a scheduled list
tries again at its next time.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext

from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_contracts.sourcelists import RequestSourceList, SourceListUpdated, SourceType
from research_ledger import Ledger, UnitOfWork
from research_llm import ProviderChain, remote_configured
from research_modes import SourceLog, mode_run, tell
from research_platform.logging import get_logger
from research_runs import RunRecorder
from research_scout import detail as offline_detail
from research_scout import experiment, llm, prepare, repository, reshape
from research_scout.repository import SERVICE
from research_scout.settings import ScoutSettings

log = get_logger(__name__)

Search = Callable[[SearchEvidence], Awaitable[EvidenceFound]]


@dataclass
class Outcome:
    """What a finished run produced (for callers, tests and the benchmark)."""

    snapshot: reshape.Snapshot | None
    version: int | None = None
    diff: Any = None
    stop_reason: str | None = None
    skipped: bool = False
    error: str | None = None
    seconds: float = 0.0


@dataclass
class Loop:
    """The refinement loop of one run (no database, no broker: it gets a search function and a recorder)."""

    brief: prepare.Brief
    settings: ScoutSettings
    search: Search
    recorder: RunRecorder | None = None
    chain: ProviderChain | None = None
    pool: dict[str, prepare.Candidate] = field(default_factory=dict)
    judged: dict[str, reshape.Judged] = field(default_factory=dict)
    iterations: list[dict[str, Any]] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    sources: SourceLog = field(
        default_factory=SourceLog
    )  # which sources answered / were down in this run

    @property
    def use_model(self) -> bool:
        return self.settings.engine == "llm" and remote_configured(self.chain)

    async def _judge_all(
        self, items: list[prepare.Candidate]
    ) -> list[tuple[prepare.Candidate, experiment.Judgement]]:
        """Each new hit with its judgement: the model's where one answers; the rest by the offline
        judge (the abstract model reads them in one call)."""
        verdicts: dict[int, experiment.Judgement] = {}
        if self.use_model:
            assert self.chain is not None
            for n, item in enumerate(items):
                answer = await llm.judge(
                    self.chain,
                    item,
                    self.brief.request.prompt,
                    self.brief.keywords,
                    self.settings.llm_timeout_s,
                    fallback=False,
                )
                if answer is not None:
                    verdicts[n] = answer
        rest = [n for n in range(len(items)) if n not in verdicts]
        if rest and self.settings.judge == "abstract":
            judged = await asyncio.to_thread(
                experiment.judge_batch,
                [items[n] for n in rest],
                self.brief.keywords,
                self.brief.request.prompt,
                partial=self.settings.partial_evidence,
            )
            verdicts.update(zip(rest, judged, strict=True))
        for n in rest:
            if n not in verdicts:
                verdicts[n] = await asyncio.to_thread(
                    experiment.judge, items[n], self.brief.keywords, self.brief.request.prompt
                )
        return [(item, verdicts[n]) for n, item in enumerate(items)]

    async def _refine(
        self,
        query: str,
        tried: list[str],
        batch: list[tuple[prepare.Candidate, experiment.Judgement]],
    ) -> str:
        if self.use_model:
            assert self.chain is not None
            return await llm.refine(
                self.chain,
                query,
                self.brief.request.prompt,
                self.brief.keywords,
                tried,
                batch,
                self.settings.llm_timeout_s,
            )
        return experiment.refine(query, self.brief.keywords, batch)

    async def _search(self, query: str) -> EvidenceFound:
        ask = SearchEvidence(
            query=query[:1000],
            sources=self.brief.sources or ["corpus"],
            limit=self.settings.per_source_limit,
            filters=self.brief.filters,
            deadline_s=self.settings.deadline_s,
        )
        if not self.brief.sources:
            return EvidenceFound(degraded={"*": "no API allowed for this source type"})
        if self.recorder is None:
            found = await self.search(ask)
        else:
            async with self.recorder.tool(
                "scout.search", {"query": query, "sources": ask.sources}
            ) as call:
                found = await self.search(ask)
                call.result = {
                    "hits": len(found.hits),
                    "degraded": found.degraded,
                    "error": found.error,
                }
        await tell(self.recorder, self.sources, ask.sources, found)
        return found

    async def run(self) -> str:
        """Iterate until a stop rule holds; returns the stop reason."""
        request = self.brief.request
        query = self.brief.query
        tried: list[str] = []
        iteration = 0
        while True:
            iteration += 1
            found = await self._search(query)
            fresh = prepare.merge([prepare.candidate(h) for h in found.hits], self.pool)
            fresh = [
                c for c in fresh if prepare.within_dates(c, request.date_from, request.date_to)
            ]
            batch = await self._judge_all(fresh)
            for item, verdict in batch:
                self.judged[item.key] = reshape.Judged(item, verdict)
            strong = sum(1 for j in self.judged.values() if j.judgement.label == "strong")
            note = experiment.memo(batch)
            wants_more = (
                strong < request.num_references and iteration < self.settings.max_iterations
            )
            next_query = (
                await self._refine(query, tried, batch) if wants_more else None
            )  # no model call past the cap
            reason = experiment.stop_reason(
                strong=strong,
                wanted=request.num_references,
                iteration=iteration,
                cap=self.settings.max_iterations,
                next_query=next_query,
                tried=[*tried, query],
            )
            counts = {
                "hits": len(found.hits),
                "new": len(fresh),
                "strong_total": strong,
                **{
                    label: sum(1 for _, j in batch if j.label == label)
                    for label in ("strong", "partial", "irrelevant")
                },
            }
            record = {
                "iteration": iteration,
                "query": query,
                "counts": counts,
                "memo": note,
                "stop_reason": reason,
                "next_query": next_query,
                "degraded": found.degraded,
            }
            self.iterations.append(record)
            self.trace.append(
                {**record, "judgements": [self.judgement_row(iteration, c, j) for c, j in batch]}
            )
            await self._emit(iteration, record, batch)
            if reason:
                return reason
            tried.append(query)
            query = next_query or ""

    @staticmethod
    def judgement_row(
        iteration: int, item: prepare.Candidate, verdict: experiment.Judgement
    ) -> dict[str, Any]:
        return {
            "source_id": item.source_id,
            "origin_id": item.hit.source_id[:300],
            "title": item.hit.title[:2000],
            "label": verdict.label,
            "confidence": experiment.clamp01(verdict.confidence),
            "rationale": verdict.rationale,
        }

    async def _emit(
        self,
        iteration: int,
        record: dict[str, Any],
        batch: list[tuple[prepare.Candidate, experiment.Judgement]],
    ) -> None:
        if self.recorder is None:
            return
        for item, verdict in batch:
            await self.recorder.verdict(
                verdict.label,
                confidence=f"{experiment.clamp01(verdict.confidence):.2f}",
                iteration=iteration,
                details={
                    "source_id": str(item.source_id),
                    "title": item.hit.title[:300],
                    "rationale": verdict.rationale,
                    "model": verdict.model,
                },
            )
        text = f"Iteration {iteration}: query {record['query']!r}; {record['counts']}"
        if record["memo"]:
            text += f"; feedback: {record['memo']}"
        text += (
            f"; stop: {record['stop_reason']}"
            if record["stop_reason"]
            else f"; next query: {record['next_query']!r}"
        )
        await self.recorder.reasoning(text)

    async def details(self, chosen: list[reshape.Judged]) -> None:
        """Extract each chosen source at the list's detail level."""
        request = self.brief.request
        academic = request.source_type is SourceType.academic
        for entry in chosen:
            if self.use_model:
                assert self.chain is not None
                entry.detail = await llm.detail(
                    self.chain,
                    entry.item,
                    request.detail_level,
                    request.prompt,
                    self.brief.keywords,
                    academic=academic,
                    timeout_s=self.settings.llm_timeout_s,
                    judged=entry.judgement,
                )
            else:
                entry.detail = await asyncio.to_thread(
                    offline_detail.detail,
                    entry.item,
                    request.detail_level,
                    self.brief.keywords,
                    academic=academic,
                    prompt=request.prompt,
                    judged=entry.judgement,
                    abstract=self.settings.judge == "abstract",
                )


async def build(
    brief: prepare.Brief,
    settings: ScoutSettings,
    search: Search,
    *,
    run_id: str,
    removed: set[uuid.UUID] | None = None,
    preferred: dict[str, dict[str, Any]] | None = None,
    next_run_at: datetime | None = None,
    recorder: RunRecorder | None = None,
    chain: ProviderChain | None = None,
    sources: SourceLog | None = None,
) -> tuple[reshape.Snapshot, Loop, str]:
    """The refinement loop, the details and the conformed snapshot (no storage)."""
    loop = Loop(brief, settings, search, recorder, chain, sources=sources or SourceLog())
    stop = await loop.run()
    chosen = reshape.rank(list(loop.judged.values()), removed or set())[
        : brief.request.num_references
    ]
    await loop.details(chosen)
    snapshot = reshape.conform(
        brief,
        chosen,
        preferred=preferred or {},
        generated_at=datetime.now(UTC),
        next_run_at=next_run_at,
        run_id=run_id,
    )
    snapshot.iterations = loop.iterations
    if (
        not snapshot.source_list.sources
    ):  # an empty list says why (GET, console, CLI and the export show it)
        reason = reshape.why_empty(brief, loop.iterations, list(loop.judged.values()))
        snapshot.source_list.note = reason
        snapshot.report.metadata["empty_reason"] = reason
        snapshot.report.sections[0].body = reason
    return snapshot, loop, stop


@dataclass
class Scout:
    """Runs source lists end to end: storage, run events and the update event."""

    ledger: Ledger
    settings: ScoutSettings
    search: Search
    jetstream: Callable[[], JetStreamContext]
    chain: ProviderChain | None = None
    run_events: Any = None  # the declared run-event publisher (None: the JetStream context)

    async def handle(self, request: RequestSourceList) -> Outcome:
        """Build one run of a list; a redelivered run that already finished is skipped."""
        started = time.monotonic()
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            limits = await uow.limits.of(request.workspace)
            brief = prepare.brief(request, limits)  # PrepareError → dead letter (Delivery)
            start = await repository.begin(uow, brief.request, limits, datetime.now(UTC))
        if not start.go:
            return Outcome(None, skipped=True)

        async def run_failed(uow: UnitOfWork, reason: str) -> None:
            await repository.run_failed(uow, brief.request, reason)

        async with mode_run(
            self.jetstream(),
            self.ledger,
            service=SERVICE,
            kind="source_list",
            report_id=request.source_list_id,
            run_id=request.run_id,
            agent="scout",
            settle_all=True,
            also_on_failure=run_failed,
            publisher=self.run_events,
        ) as run:
            recorder = run.recorder
            if start.schedule_refused:
                await recorder.reasoning(f"Not scheduled: {start.schedule_refused}")
            snapshot, loop, stop = await build(
                brief,
                self.settings,
                self.search,
                run_id=request.run_id,
                removed=start.removed,
                preferred=start.preferred,
                next_run_at=start.next_run_at,
                recorder=recorder,
                chain=self.chain,
                sources=run.sources,
            )
            run.sources.check()  # every source down: the run fails with the reason, not an empty list
            snapshot.report.metadata.update(run.sources.metadata())
            diff = reshape.diff(start.previous, snapshot)
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                for record in loop.trace:
                    await uow.source_lists.record_iteration(
                        request.run_id,
                        record["iteration"],
                        query=record["query"],
                        counts=record["counts"],
                        memo=record["memo"],
                        stop_reason=record["stop_reason"],
                        judgements=record["judgements"],
                    )
                version = await repository.store(
                    uow,
                    brief.request,
                    snapshot,
                    diff,
                    retention=self.settings.retention_versions,
                    stop_reason=stop,
                )
                run.audit_sources(uow)
                uow.outbox.add(  # published after the commit, with the version
                    subjects.SOURCELIST_UPDATED,
                    SourceListUpdated(
                        source_list_id=request.source_list_id,
                        run_id=request.run_id,
                        version=version,
                        workspace=request.workspace,
                        trigger=request.trigger,
                        generated_at=snapshot.source_list.generated_at,
                        next_run_at=start.next_run_at,
                        sources=len(snapshot.source_list.sources),
                        diff=diff,
                        save_to=request.save_to,
                    ),
                    msg_id=f"sourcelist-updated-{request.run_id}",
                )
            await recorder.result(
                report=snapshot.report.model_dump(mode="json"),
                iteration_info=loop.iterations,
                iterations=len(loop.iterations),
            )
        if run.failed:
            return Outcome(None, error=run.failed, seconds=time.monotonic() - started)
        return Outcome(snapshot, version, diff, stop, seconds=time.monotonic() - started)
