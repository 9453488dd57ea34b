"""`Ledger`: the one writer of tasks, claims, verdicts, reports, watched claims and held re-critiques, in the caller's
transaction — one small object per lifecycle, sharing the caller's session:

    ledger = Ledger(session, service="researcher")
    ledger.tasks      start / submit / fail / get                          (`tasks.py`, research_tasks)
    ledger.claims     propose / for_task                                   (`claims.py`, memory_claims, research_sources)
    ledger.verdicts   decide / supersede / record_timeout / release / reconsider
                                                                           (`verdicts.py`, memory_claims, critic_verdicts)
    ledger.reports    open / save_version / complete / fail / refresh / mark_stale / undermined_claims
                                                                           (`reports.py`, reports, report_versions, report_claims)
    ledger.watched    watch / record_verdict / due / mark_requested       (`watched.py`, watched_claims, verification_verdicts)
    ledger.recritiques hold / due / mark_requested / settle               (`recritiques.py`, held_recritiques)
    ledger.outbox     add                                                  (`outbox.py`, outbox_events)
    ledger.audit(AuditAction.X, payload=...)   # any other audit row, checked against the catalogue

Every table is modelled in `research_platform.models`, the outbox's in `research_ledger.outbox`.
An event the change must publish is staged on `ledger.outbox` and published after the commit. The lifecycle objects do not inherit from
each other; a move that spans two of them says so (`claims.propose` marks the task claimed
through `tasks`).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.base import LedgerBase
from research_ledger.claims import Claims
from research_ledger.outbox import Outbox
from research_ledger.recritiques import Recritiques
from research_ledger.reports import Reports
from research_ledger.tasks import Tasks
from research_ledger.verdicts import Verdicts
from research_ledger.watched import WatchedClaims


class Ledger(LedgerBase):
    """The lifecycle objects of one session (`tasks`, `claims`, `verdicts`, `reports`, `watched`,
    `recritiques`), the audit writer they share and the outbox of the events they publish."""

    def __init__(self, session: AsyncSession, *, service: str) -> None:
        super().__init__(session, service=service)
        self.tasks = Tasks(session, service=service)
        self.claims = Claims(session, service=service, tasks=self.tasks)
        self.verdicts = Verdicts(session, service=service)
        self.reports = Reports(session, service=service)
        self.watched = WatchedClaims(session)
        self.recritiques = Recritiques(session)
        self.outbox = Outbox(session, service=service)
