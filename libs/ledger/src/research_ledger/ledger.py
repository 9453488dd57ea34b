"""`Ledger` and its `UnitOfWork`: the one door to the ledger's tables.

    ledger = Ledger(sessions)                      # a service holds one, built from its session factory
    async with ledger.unit_of_work(service="researcher") as uow:
        task = await uow.tasks.start(...)          # every repository is an attribute of the unit of work
        uow.outbox.add(subject, event)             # published after the commit (`research_ledger.outbox`)
    # one commit here; any error rolls everything back

    async with ledger.reading() as uow:            # reads only (the read replica when one is configured)
        claims = await uow.claims.for_task(task_id)

The repositories, one per thing the ledger holds, share the unit of work's session:

    uow.tasks         start / submit / fail / get                          (`tasks.py`, research_tasks)
    uow.claims        propose / for_task                                   (`claims.py`, memory_claims, research_sources)
                      get / statuses / pending_among / nearest / due_for_recheck   (reads)
    uow.verdicts      decide / supersede / record_timeout / release / reconsider
                                                                           (`verdicts.py`, memory_claims, critic_verdicts)
    uow.reports       open / save_version / complete / fail / refresh / mark_stale / undermined_claims
                                                                           (`reports.py`, reports, report_versions, report_claims)
    uow.watched       watch / record_verdict / due / mark_requested       (`watched.py`, watched_claims, verification_verdicts)
                      requests                                             (reads)
    uow.recritiques   hold / due / mark_requested / settle                 (`recritiques.py`, held_recritiques)
    uow.source_lists  schedules, runs, iterations, judgements, actions     (`source_lists.py`, source_list_*)
    uow.limits        a workspace's source limits                          (`source_limits.py`, source_list_limits)
    uow.outbox        add                                                  (`outbox.py`, outbox_events)
    uow.keys          api keys, a key's quota overrides and workspaces     (`keys.py`, api_keys, key_limits, key_workspaces)
    uow.signins       console sessions, sign-in codes, failed key checks   (`signins.py`, console_*, auth_failures)
    uow.submissions   a key's quota slots: lock / take / release / settle  (`submissions.py`, key_submissions)
    uow.claim_views   a task or claim as a reader sees it, claim listings  (`claim_views.py`, read only)
    uow.work          a key's own tasks and reports (My work)              (`work.py`, read only)
    uow.audit_log     the audit log and the agents' findings, browsed      (`audit_log.py`, read only)
    uow.sources       retracted / years / known                            (`sources.py`, research_sources)
    uow.entities      clustered / known / cluster                          (`entities.py`, memory_claims by entity)
    uow.findings      record / settle / open_for_claims / mark_resolved / discredited
                                                                           (`findings.py`, findings; the service is the agent)
    uow.provenance    plan_generically / prepare_walk / assess / analyze_findings
                                                                           (`provenance.py`, the active claims' supports)
    uow.audit(AuditAction.X, payload=...)   # any other audit row, checked against the catalogue

Every table is modelled in `research_ledger.tables` (the outbox's in `research_ledger.outbox`).
The repositories do not inherit from each other; a move that spans two of them says so
(`claims.propose` marks the task claimed through `tasks`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_ledger.audit_log import AuditLog
from research_ledger.base import LedgerBase
from research_ledger.claim_views import ClaimViews
from research_ledger.claims import Claims
from research_ledger.entities import Entities
from research_ledger.findings import Findings
from research_ledger.keys import Keys
from research_ledger.outbox import Outbox
from research_ledger.provenance import Provenance
from research_ledger.recritiques import Recritiques
from research_ledger.reports import Reports
from research_ledger.signins import Signins
from research_ledger.source_limits import LimitsBook
from research_ledger.source_lists import SourceListBook
from research_ledger.sources import Sources
from research_ledger.submissions import Submissions
from research_ledger.tasks import Tasks
from research_ledger.verdicts import Verdicts
from research_ledger.watched import WatchedClaims
from research_ledger.work import Work


class UnitOfWork(LedgerBase):
    """The repositories of one transaction (`tasks`, `claims`, `verdicts`, `reports`, `watched`,
    `recritiques`, `source_lists`, `limits`, `sources`, `entities`, `findings`, `provenance`),
    the audit writer they share and the outbox of the events they publish. Built by `Ledger.unit_of_work`, which commits it once; built directly
    over a session only where the caller already holds the transaction (a request's session)."""

    def __init__(self, session: AsyncSession, *, service: str) -> None:
        super().__init__(session, service=service)
        self.tasks = Tasks(session, service=service)
        self.claims = Claims(session, service=service, tasks=self.tasks)
        self.verdicts = Verdicts(session, service=service)
        self.reports = Reports(session, service=service)
        self.watched = WatchedClaims(session)
        self.recritiques = Recritiques(session)
        self.source_lists = SourceListBook(session, service=service)
        self.limits = LimitsBook(session)
        self.outbox = Outbox(session, service=service)
        # what the gateway keeps and reads: keys, sign-ins, quota slots, and the read models
        self.keys = Keys(session, service=service)
        self.signins = Signins(session, service=service)
        self.submissions = Submissions(session, service=service)
        self.claim_views = ClaimViews(session, service=service)
        self.work = Work(session, service=service)
        self.audit_log = AuditLog(session, service=service)
        # what the services read and the agents' findings
        self.sources = Sources(session)
        self.entities = Entities(session, sources=self.sources)
        self.findings = Findings(session, agent=service)
        self.provenance = Provenance(session, agent=service)


class Ledger:
    """The door a service holds: units of work over its session factory (and a read-only one
    for `reading`, when it has a replica)."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        read_sessions: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.sessions = sessions
        self.read_sessions = read_sessions or sessions

    @asynccontextmanager
    async def unit_of_work(self, *, service: str) -> AsyncIterator[UnitOfWork]:
        """One transaction: commits once when the block ends, rolls back on any error."""
        async with self.sessions() as session, session.begin():
            yield UnitOfWork(session, service=service)

    @asynccontextmanager
    async def reading(self, *, service: str = "reader") -> AsyncIterator[UnitOfWork]:
        """Reads in one snapshot; nothing written here is committed. The rows read stay usable
        after the block: the session is closed (its transaction discarded with the connection's
        reset), not rolled back, which would expire every row it loaded."""
        async with self.read_sessions() as session:
            yield UnitOfWork(session, service=service)
