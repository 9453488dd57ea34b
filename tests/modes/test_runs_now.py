"""A mode works a command only for its report's current run while it is running: a command for an
older run (the report was refreshed since) or redelivered after the run ended does nothing."""

from __future__ import annotations

import pytest

from research_ledger import ReportStatus
from research_ledger.tables import ReportRow
from research_modes import runs_now

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("row_run", "status", "works"),
    [
        ("run-2", ReportStatus.running, True),
        ("run-1", ReportStatus.running, False),  # refreshed: run-2 is the report's run now
        ("run-2", ReportStatus.completed, False),  # redelivered after the run saved its version
        ("run-2", ReportStatus.failed, False),
    ],
)
def test_only_the_reports_current_running_run_is_worked(
    row_run: str, status: ReportStatus, works: bool
) -> None:
    row = ReportRow(run_id=row_run, status=status)
    assert runs_now(row, "run-2") is works
