"""The scout's moves on the ledger, by intent, in the caller's unit of work: open or refresh a
list's report and read what a run needs (the previous snapshot, per-source actions, the
schedule), store a snapshot, fail a run.

Everything goes through the unit of work's repositories (`uow.reports` for the report lifecycle,
`uow.source_lists` for schedules, runs and the refinement trace, `uow.limits` for a workspace's
limits).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from research_contracts.sourcelists import RequestSourceList, SourceListDiff, duration_seconds
from research_ledger import UnitOfWork
from research_ledger.source_limits import WorkspaceLimits, schedule_refusal
from research_privacy.boundary import person_text
from research_scout.reshape import Snapshot

SERVICE = "scout"


@dataclass
class RunStart:
    """What a run starts from: whether it should run at all, and the list's standing state."""

    go: bool
    previous: Snapshot | None = None
    removed: set[uuid.UUID] | None = None
    preferred: dict[str, dict[str, Any]] | None = None
    next_run_at: datetime | None = None
    schedule_refused: str | None = None


async def begin(
    uow: UnitOfWork, request: RequestSourceList, limits: WorkspaceLimits, now: datetime
) -> RunStart:
    """Open the list's report (or move it to this run), record the run, set the schedule the
    first time; `go` is False when this run already finished (a redelivered command)."""
    list_id = request.source_list_id
    opened = await uow.reports.open(
        list_id,
        kind="source_list",
        run_id=request.run_id,
        subject=person_text(request.prompt),
        # derived from de-identified text, and de-identified again: the ledger's check (the same detector) passes
        subject_key=person_text(" ".join(request.keywords)[:200] or request.prompt[:200]),
        request=request.model_dump(mode="json", exclude={"run_id", "trigger"}),
        save_to=request.save_to.model_dump() if request.save_to else {},
    )
    if not opened:
        report = await uow.reports.get(list_id, kind="source_list")
        if report is None:
            raise LookupError(f"{list_id} is a report of another kind")
        if report.run_id != request.run_id:
            await uow.reports.refresh(list_id, run_id=request.run_id)
    if not await uow.source_lists.start_run(request.run_id, list_id, request.trigger):
        return RunStart(go=False)
    refused = None
    schedule = await uow.source_lists.schedule(list_id)
    if schedule is None and request.update_frequency:
        refused = schedule_refusal(
            request.update_frequency,
            await uow.source_lists.scheduled_count(request.workspace),
            limits,
        )
        if refused is None:
            every = duration_seconds(request.update_frequency)
            await uow.source_lists.set_schedule(
                list_id,
                workspace=request.workspace,
                update_frequency=request.update_frequency,
                every_s=every,
                next_run_at=now + timedelta(seconds=every),
            )
            schedule = await uow.source_lists.schedule(list_id)
    previous_row = await uow.reports.version(list_id)
    removed, preferred = await uow.source_lists.actions(list_id)
    return RunStart(
        go=True,
        previous=Snapshot.from_content(previous_row.content) if previous_row is not None else None,
        removed=removed,
        preferred=preferred,
        next_run_at=schedule.next_run_at
        if schedule is not None and schedule.status == "active"
        else None,
        schedule_refused=refused,
    )


async def store(
    uow: UnitOfWork,
    request: RequestSourceList,
    snapshot: Snapshot,
    diff: SourceListDiff,
    *,
    retention: int,
    stop_reason: str | None,
) -> int:
    """Save the snapshot as the next report version, prune old ones, complete report and run."""
    list_id = request.source_list_id
    changes = {"new": len(diff.new), "changed": len(diff.changed), "dropped": len(diff.dropped)}
    version = await uow.reports.save_version(
        list_id,
        run_id=request.run_id,
        content=snapshot.content(),
        markdown=snapshot.report.render_markdown(),
        citation_check={
            **snapshot.citation_check.model_dump(mode="json"),
            "ok": not snapshot.citation_check.issues,
        },
        diff=diff.model_dump(mode="json"),
        counts={"sources": len(snapshot.source_list.sources)},
    )
    await uow.source_lists.prune_snapshots(list_id, retention)
    await uow.reports.complete(list_id, outcome=stop_reason)
    await uow.source_lists.finish_run(
        request.run_id,
        "completed",
        trigger=request.trigger,
        sources=len(snapshot.source_list.sources),
        version=version,
        stop_reason=stop_reason,
        counts={
            "iterations": len(snapshot.iterations),
            "dropped_facts": snapshot.dropped_facts,
            **changes,
        },
    )
    return version


async def run_failed(uow: UnitOfWork, request: RequestSourceList, reason: str) -> None:
    """The run's row `failed` (the report itself is failed by `research_modes.mode_run`)."""
    await uow.source_lists.finish_run(
        request.run_id, "failed", trigger=request.trigger, error=reason
    )
