"""`Ledger`: the one writer of tasks, claims and verdicts, in the caller's transaction.

    ledger = Ledger(session, service="researcher")
    await ledger.start(task); await ledger.propose(claim, embedding, hits)
    await ledger.fail(task_id, "why")          # idempotent; no-op on a terminal task
    ledger.audit(AuditAction.X, payload=...)   # any other audit row, checked against the catalogue

The methods are grouped by aggregate in `tasks.py`, `claims.py` and `verdicts.py`; this class
only gathers them so a caller needs one object.
"""

from __future__ import annotations

from research_ledger.verdicts import VerdictLifecycle


class Ledger(VerdictLifecycle):
    """Intent methods on the ledger: `submit`, `start`, `fail`, `propose`, `decide`
    (promote / supersede / reject), `record_timeout` (quarantine), `release`, `reconsider`."""
