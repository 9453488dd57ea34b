"""The lifecycle vocabulary of tasks and claims (the moves are the intent methods of `Ledger`).

`ClaimStatus` travels on the bus (`ClaimDecided.status`), so its definition stays in
`research_contracts` (the lowest layer, which must not depend on this library) and is
re-exported here; `TaskStatus` is new here. Only `research_ledger` writes either column.

    task:   queued ─→ researching ─→ claimed
               └──────────┴─────────→ failed          (terminal: claimed, failed)
    claim:  pending ─→ active ─→ superseded | rejected (re-critique)
               ├─→ rejected
               └─→ critic_quarantine ─→ pending (operator drain)
    report: running ─→ completed ─→ stale ─→ running (refresh) …   (`research_ledger.reports`)
               └─────→ failed ──────────────→ running (refresh)
"""

from __future__ import annotations

from enum import StrEnum

from research_contracts import ClaimStatus


class TaskStatus(StrEnum):
    """Where a research task is; the values are those stored in `research_tasks.status`."""

    queued = "queued"
    researching = "researching"
    claimed = "claimed"
    failed = "failed"


TERMINAL_TASK_STATES = frozenset({TaskStatus.claimed, TaskStatus.failed})


class ReportStatus(StrEnum):
    """Where a mode's report is; the values are those stored in `reports.status`."""

    running = "running"
    completed = "completed"
    stale = "stale"
    failed = "failed"


# A report in one of these states may run again (a refresh, a scheduled re-verification).
REFRESHABLE_REPORT_STATES = (ReportStatus.completed, ReportStatus.stale, ReportStatus.failed)

__all__ = [
    "REFRESHABLE_REPORT_STATES",
    "TERMINAL_TASK_STATES",
    "ClaimStatus",
    "ReportStatus",
    "TaskStatus",
]
