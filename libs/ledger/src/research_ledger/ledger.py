"""`Ledger`: the one writer of tasks, claims and verdicts, in the caller's transaction.

    ledger = Ledger(session, service="researcher")
    await ledger.start(task); await ledger.propose(claim, embedding, hits)
    await ledger.fail(task_id, "why")          # idempotent; no-op on a terminal task
    ledger.audit(AuditAction.X, payload=...)   # any other audit row, checked against the catalogue

The methods are grouped by aggregate in `tasks.py`, `claims.py`, `verdicts.py` and `reports.py`; this class
only gathers them so a caller needs one object.
"""

from __future__ import annotations

from research_ledger.reports import ReportLifecycle
from research_ledger.verdicts import VerdictLifecycle


class Ledger(VerdictLifecycle, ReportLifecycle):
    """Intent methods on the ledger: `submit`, `start`, `fail`, `propose`, `decide`
    (promote / supersede / reject), `record_timeout` (quarantine), `release`, `reconsider`;
    reports: `open_report`, `save_report_version`, `complete_report`, `fail_report`,
    `refresh_report`, `mark_reports_stale_for_claim`, `undermined_claims`."""
