"""research_ledger: the one owner of the ledger's lifecycles (tasks, claims, verdicts, reports,
watched claims, held re-critiques) and of the audit log.

    from research_ledger import Ledger, TaskStatus, ClaimStatus, ReportStatus, AuditAction

`Ledger(session, service=...)` holds one object per lifecycle (`ledger.tasks`, `.claims`,
`.verdicts`, `.reports`, `.watched`, `.recritiques`, see `research_ledger.ledger`) whose intent methods write the
state change and its audit row in the caller's transaction; `ledger.outbox` stages the events
the change must publish, sent after the commit (`research_ledger.outbox`). `Ledger.audit`
(`Ledger.audit_many` for a batch) is the only audit writer outside this package and takes only
members of the catalogue (`research_ledger.catalogue`).
"""

from research_ledger import audit
from research_ledger.catalogue import AuditAction, payload_schema
from research_ledger.claims import ClaimProposal
from research_ledger.errors import EntityChanged, RunTaken
from research_ledger.ledger import Ledger, UnitOfWork
from research_ledger.recritiques import Recritique
from research_ledger.reports import StaleReport, UnderminedClaim
from research_ledger.status import ClaimStatus, ReportStatus, TaskStatus
from research_ledger.tasks import SubmitResult, task_id_for_key

__all__ = [
    "AuditAction",
    "ClaimProposal",
    "ClaimStatus",
    "EntityChanged",
    "Ledger",
    "Recritique",
    "ReportStatus",
    "RunTaken",
    "StaleReport",
    "SubmitResult",
    "TaskStatus",
    "UnderminedClaim",
    "UnitOfWork",
    "audit",
    "payload_schema",
    "task_id_for_key",
]
