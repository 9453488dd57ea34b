"""What the correlator records of a cluster, in the caller's unit of work: its finding, its
no-pattern verdict, and the resolution of the open findings that no longer hold (each with its
audit row). The reads are the ledger's (`uow.entities`, `uow.findings`).

These functions only write: the service prepares what it reads (`prepare.cluster`) and reshapes
what it writes (`reshape.finding`, `reshape.no_pattern_payload`).
"""

from __future__ import annotations

import uuid
from typing import Any

from research_ledger import AuditAction, UnitOfWork
from research_ledger.findings import FindingView, NewFinding

SERVICE = "correlator"


async def open_of_entity(
    uow: UnitOfWork, entity: str, claim_ids: tuple[uuid.UUID, ...]
) -> list[FindingView]:
    """The correlator's open findings on `claim_ids` that are about `entity`."""
    return [
        f
        for f in await uow.findings.open_for_claims(claim_ids)
        if f.payload.get("entity") == entity
    ]


async def record(
    uow: UnitOfWork,
    entity: str,
    new: NewFinding,
    audit_payload: dict[str, Any],
    run_id: uuid.UUID | None,
) -> uuid.UUID:
    """The cluster's finding and its `research.correlator.finding` audit row; the finding id."""
    finding_id = await uow.findings.record(new.kind, new.claim_ids, new.payload)
    uow.audit(
        AuditAction.CORRELATOR_FINDING,
        subject_ids={
            "finding_id": finding_id,
            "entity": entity,
            "run_id": run_id,
            "claim_ids": list(new.claim_ids),
        },
        payload=audit_payload,
    )
    return finding_id


def no_pattern(
    uow: UnitOfWork, entity: str, payload: dict[str, Any], run_id: uuid.UUID | None
) -> None:
    """The `research.correlator.no_pattern` audit row of a cluster without a pattern."""
    uow.audit(
        AuditAction.CORRELATOR_NO_PATTERN,
        subject_ids={"entity": entity, "run_id": run_id},
        payload=payload,
    )


async def resolve(
    uow: UnitOfWork,
    stale: list[FindingView],
    entity: str,
    now: str | None,
    run_id: uuid.UUID | None,
) -> int:
    """Resolve the findings that no longer hold (one audit row each); how many were resolved."""
    resolved = set(await uow.findings.mark_resolved_many([f.finding_id for f in stale]))
    for f in stale:
        if f.finding_id in resolved:
            uow.audit(
                AuditAction.CORRELATOR_RESOLVED,
                subject_ids={"finding_id": f.finding_id, "entity": entity, "run_id": run_id},
                payload={"kind": f.kind, "now": now or "no_pattern"},
            )
    return len(resolved)
