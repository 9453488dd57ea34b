"""Source-list records beyond the report itself: schedules, run history, per-source actions and
the refinement trace (migration 0005). The snapshots are report versions (kind `source_list`,
`research_ledger.reports`); a source list's id is its report id.

    schedule:  active ⇄ paused;  active | paused → cancelled (final)
    run:       scheduled → running → completed | failed

`claim_due` is how a schedule fires at most once per due time across replicas: it moves
`next_run_at` forward only if it still holds the value the caller read (under `FOR UPDATE SKIP
LOCKED`), so a second replica finds nothing to claim. Every change an operator or user makes
(schedule verbs, per-source remove / preferred) writes its audit row in the same transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert

from research_ledger.audit import storable
from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.errors import RunTaken
from research_ledger.tables import (
    ReportRow,
    ReportVersionRow,
    SourceListAction,
    SourceListIteration,
    SourceListJudgement,
    SourceListRun,
    SourceListSchedule,
)

SCHEDULE_VERBS = ("pause", "resume", "cancel", "modify")


@dataclass(frozen=True)
class DueSchedule:
    source_list_id: uuid.UUID
    workspace: str
    next_run_at: datetime
    every_s: float


class SourceListBook(LedgerBase):
    """Intent methods on the source-list tables, in the caller's transaction."""

    # --- schedules ----------------------------------------------------------------------------
    async def set_schedule(
        self,
        source_list_id: uuid.UUID,
        *,
        workspace: str,
        update_frequency: str,
        every_s: float,
        next_run_at: datetime,
    ) -> None:
        values = {
            "workspace": workspace,
            "update_frequency": update_frequency,
            "every_s": every_s,
            "status": "active",
            "next_run_at": next_run_at,
        }
        await self.session.execute(
            insert(SourceListSchedule)
            .values(source_list_id=source_list_id, **values)
            .on_conflict_do_nothing()
        )
        self.audit(
            AuditAction.SOURCELIST_SCHEDULE_CHANGED,
            subject_ids={"report_id": source_list_id},
            payload={
                "action": "set",
                "status": "active",
                "update_frequency": update_frequency,
                "next_run_at": next_run_at.isoformat(),
            },
        )

    async def schedule(self, source_list_id: uuid.UUID) -> SourceListSchedule | None:
        return await self.session.get(SourceListSchedule, source_list_id)

    async def scheduled_count(self, workspace: str, *, excluding: uuid.UUID | None = None) -> int:
        """Active or paused schedules of the workspace (what `max_scheduled_lists` counts)."""
        query = (
            select(func.count())
            .select_from(SourceListSchedule)
            .where(
                SourceListSchedule.workspace == workspace,
                SourceListSchedule.status.in_(("active", "paused")),
            )
        )
        if excluding is not None:
            query = query.where(SourceListSchedule.source_list_id != excluding)
        return int(await self.session.scalar(query) or 0)

    async def change_schedule(
        self,
        source_list_id: uuid.UUID,
        verb: str,
        *,
        now: datetime,
        update_frequency: str | None = None,
        every_s: float | None = None,
    ) -> SourceListSchedule | None:
        """pause / resume / cancel / modify; None when there is no schedule or it was cancelled."""
        row = await self.session.get(SourceListSchedule, source_list_id, with_for_update=True)
        if row is None or row.status == "cancelled" or verb not in SCHEDULE_VERBS:
            return None
        if verb == "pause":
            row.status = "paused"
        elif verb == "resume":
            row.status = "active"
            if row.next_run_at is None or row.next_run_at < now:
                row.next_run_at = now
        elif verb == "cancel":
            row.status, row.next_run_at = "cancelled", None
        else:
            assert update_frequency is not None and every_s is not None
            row.update_frequency, row.every_s = update_frequency, every_s
            row.next_run_at = (row.last_run_at or now) + timedelta(seconds=every_s)
        row.updated_at = now
        self.audit(
            AuditAction.SOURCELIST_SCHEDULE_CHANGED,
            subject_ids={"report_id": source_list_id},
            payload={
                "action": verb,
                "status": row.status,
                "update_frequency": row.update_frequency,
                "next_run_at": row.next_run_at.isoformat() if row.next_run_at else None,
            },
        )
        return row

    async def due(self, now: datetime, limit: int = 50) -> list[DueSchedule]:
        rows = await self.session.scalars(
            select(SourceListSchedule)
            .where(SourceListSchedule.status == "active", SourceListSchedule.next_run_at <= now)
            .order_by(SourceListSchedule.next_run_at)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        return [
            DueSchedule(r.source_list_id, r.workspace, r.next_run_at, r.every_s)
            for r in rows
            if r.next_run_at
        ]

    async def claim_due(self, due: DueSchedule, now: datetime) -> datetime | None:
        """Fire `due` once: move `next_run_at` on if nobody did; the new value, or None when lost."""
        following = max(
            due.next_run_at + timedelta(seconds=due.every_s),
            now + timedelta(seconds=due.every_s * 0.5),
        )
        moved = await self.session.scalar(
            update(SourceListSchedule)
            .where(
                SourceListSchedule.source_list_id == due.source_list_id,
                SourceListSchedule.status == "active",
                SourceListSchedule.next_run_at == due.next_run_at,
            )
            .values(next_run_at=following, last_run_at=now, updated_at=now)
            .returning(SourceListSchedule.next_run_at)
        )
        return moved

    # --- runs ---------------------------------------------------------------------------------
    async def start_run(self, run_id: str, source_list_id: uuid.UUID, trigger: str) -> bool:
        """Record the run as running; False when it already finished (a redelivered request).

        A run id already taken by another list raises `RunTaken`: a command never joins (and
        writes events into) somebody else's running run."""
        await self.session.execute(
            insert(SourceListRun)
            .values(run_id=run_id, source_list_id=source_list_id, trigger=trigger, status="running")
            .on_conflict_do_nothing()
        )
        row = (
            await self.session.execute(
                select(SourceListRun.source_list_id, SourceListRun.status).where(
                    SourceListRun.run_id == run_id
                )
            )
        ).one()
        if row.source_list_id != source_list_id:
            raise RunTaken(
                f"run {run_id} belongs to another source list; a run id is made once per run"
            )
        return row.status in ("running", "scheduled")

    async def finish_run(
        self,
        run_id: str,
        status: str,
        *,
        trigger: str,
        sources: int = 0,
        version: int | None = None,
        stop_reason: str | None = None,
        error: str | None = None,
        counts: dict[str, int] | None = None,
    ) -> None:
        row = await self.session.scalar(
            update(SourceListRun)
            .where(SourceListRun.run_id == run_id)
            .values(
                status=status,
                finished_at=func.now(),
                sources=sources,
                version=version,
                stop_reason=stop_reason,
                error=storable(error[:2000]) if error else None,
            )
            .returning(SourceListRun.source_list_id)
        )
        self.audit(
            AuditAction.SOURCELIST_RUN_FINISHED,
            subject_ids={"report_id": row, "run_id": run_id},
            payload={
                "run_id": run_id,
                "status": status,
                "trigger": trigger,
                "sources": sources,
                "version": version,
                "stop_reason": stop_reason,
                "error": error[:500] if error else None,
                **(counts or {}),
            },
        )

    async def fail_open_runs(self, source_list_id: uuid.UUID, reason: str) -> int:
        """Every run of the list still `running` → `failed` with `reason` (its request was
        dead-lettered: no worker will finish it); the number moved."""
        rows = list(
            await self.session.scalars(
                update(SourceListRun)
                .where(
                    SourceListRun.source_list_id == source_list_id,
                    SourceListRun.status == "running",
                )
                .values(status="failed", finished_at=func.now(), error=storable(reason[:2000]))
                .returning(SourceListRun.run_id)
            )
        )
        for run_id in rows:
            self.audit(
                AuditAction.SOURCELIST_RUN_FINISHED,
                subject_ids={"report_id": source_list_id, "run_id": run_id},
                payload={
                    "run_id": run_id,
                    "status": "failed",
                    "trigger": "dead_letter",
                    "sources": 0,
                    "version": None,
                    "stop_reason": None,
                    "error": reason[:500],
                },
            )
        return len(rows)

    async def runs(self, source_list_id: uuid.UUID, limit: int = 100) -> list[SourceListRun]:
        return list(
            await self.session.scalars(
                select(SourceListRun)
                .where(SourceListRun.source_list_id == source_list_id)
                .order_by(SourceListRun.started_at.desc())
                .limit(limit)
            )
        )

    async def record_iteration(
        self,
        run_id: str,
        iteration: int,
        *,
        query: str,
        counts: dict[str, Any],
        memo: str,
        stop_reason: str | None,
        judgements: list[dict[str, Any]],
    ) -> None:
        """One refinement iteration and every per-hit judgement of it (a redelivery rewrites neither)."""
        inserted = await self.session.scalar(
            insert(SourceListIteration)
            .values(
                run_id=run_id,
                iteration=iteration,
                query=storable(query),
                counts=counts,
                memo=storable(memo),
                stop_reason=stop_reason,
            )
            .on_conflict_do_nothing()
            .returning(SourceListIteration.iteration)
        )
        if inserted is not None and judgements:
            await self.session.execute(
                insert(SourceListJudgement).values(
                    [{"run_id": run_id, "iteration": iteration, **storable(j)} for j in judgements]
                )
            )

    async def iterations(self, run_id: str) -> list[SourceListIteration]:
        return list(
            await self.session.scalars(
                select(SourceListIteration)
                .where(SourceListIteration.run_id == run_id)
                .order_by(SourceListIteration.iteration)
            )
        )

    async def judgements(self, run_id: str) -> list[SourceListJudgement]:
        return list(
            await self.session.scalars(
                select(SourceListJudgement)
                .where(SourceListJudgement.run_id == run_id)
                .order_by(SourceListJudgement.id)
            )
        )

    # --- per-source actions -------------------------------------------------------------------
    async def mark_source(
        self, source_list_id: uuid.UUID, source_id: uuid.UUID, action: str, stored: dict[str, Any]
    ) -> None:
        """`removed` (never listed again) or `preferred` (kept on re-runs); `unpreferred` clears a flag."""
        if action == "unpreferred":
            await self.session.execute(
                delete(SourceListAction).where(
                    SourceListAction.source_list_id == source_list_id,
                    SourceListAction.source_id == source_id,
                    SourceListAction.action == "preferred",
                )
            )
        else:
            statement = insert(SourceListAction).values(
                source_list_id=source_list_id,
                source_id=source_id,
                action=action,
                stored=storable(stored),
            )
            await self.session.execute(
                statement.on_conflict_do_update(
                    index_elements=[SourceListAction.source_list_id, SourceListAction.source_id],
                    set_={
                        "action": action,
                        "stored": statement.excluded.stored,
                        "created_at": func.now(),
                    },
                )
            )
        self.audit(
            AuditAction.SOURCELIST_SOURCE_MARKED,
            subject_ids={"report_id": source_list_id},
            payload={"source_id": str(source_id), "action": action},
        )

    async def actions(
        self, source_list_id: uuid.UUID
    ) -> tuple[set[uuid.UUID], dict[str, dict[str, Any]]]:
        """(removed source ids, preferred source id → stored copy)."""
        rows = await self.session.scalars(
            select(SourceListAction).where(SourceListAction.source_list_id == source_list_id)
        )
        removed: set[uuid.UUID] = set()
        preferred: dict[str, dict[str, Any]] = {}
        for row in rows:
            if row.action == "removed":
                removed.add(row.source_id)
            else:
                preferred[str(row.source_id)] = row.stored
        return removed, preferred

    # --- snapshots ----------------------------------------------------------------------------
    async def prune_snapshots(self, source_list_id: uuid.UUID, keep: int) -> int:
        """Delete all but the newest `keep` versions of the list (the retention setting)."""
        newest = (
            select(ReportVersionRow.version)
            .where(ReportVersionRow.report_id == source_list_id)
            .order_by(ReportVersionRow.version.desc())
            .limit(keep)
        )
        result = await self.session.execute(
            delete(ReportVersionRow).where(
                ReportVersionRow.report_id == source_list_id,
                ReportVersionRow.version.not_in(newest),
            )
        )
        return int(cast(CursorResult[Any], result).rowcount or 0)  # a DELETE's result

    async def lists(
        self, *, save_to: dict[str, str] | None = None, limit: int = 100
    ) -> list[ReportRow]:
        """Source lists, newest first; `save_to` ({kind, id} or a part of it) filters by attachment."""
        query = select(ReportRow).where(ReportRow.kind == "source_list")
        if save_to:
            query = query.where(ReportRow.save_to.contains(save_to))
        return list(
            await self.session.scalars(query.order_by(ReportRow.created_at.desc()).limit(limit))
        )
