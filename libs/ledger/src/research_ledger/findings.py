"""Findings of the periodic agents (`uow.findings`): insert-only, resolvable once by their owner,
gone after 180 days.

Every query here filters `expires_at > now()`, so an expired finding is never returned even
before the maintenance step (`purge_expired`) deletes it. Nothing updates a finding except
`mark_resolved` / `settle`, which only touch unresolved, unexpired rows of the calling agent
(the unit of work's service).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict
from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import views
from research_ledger import audit
from research_ledger.audit import storable
from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.tables import Finding, view_of

if TYPE_CHECKING:  # the ledger builds its units of work from this module's repository
    from research_ledger.ledger import Ledger

FINDING_TTL = timedelta(days=180)


@dataclass(frozen=True)
class NewFinding:
    """A finding about to be recorded."""

    kind: str
    claim_ids: Sequence[uuid.UUID]
    payload: dict[str, Any] = field(default_factory=dict)


class FindingView(views.FindingView):
    """A stored, unexpired finding: the API's view of it (`research_contracts.views.FindingView`,
    what `GET /findings` answers) plus who resolved it."""

    model_config = ConfigDict(frozen=True)

    resolved_by: str | None

    @classmethod
    def of(cls, row: Finding) -> FindingView:
        return view_of(cls, row, finding_id=row.id)


def _alive() -> Any:
    return Finding.expires_at > func.now()


class Findings(LedgerBase):
    """One agent's findings (the agent is the unit of work's service), in the caller's session
    (its transaction also carries the audit rows)."""

    def __init__(self, session: AsyncSession, agent: str) -> None:
        super().__init__(session, service=agent)
        self.agent = agent

    async def record(
        self, kind: str, claim_ids: Sequence[uuid.UUID], payload: dict[str, Any] | None = None
    ) -> uuid.UUID:
        """Insert one finding; it expires `FINDING_TTL` after now."""
        (finding_id,) = await self.record_many([NewFinding(kind, claim_ids, payload or {})])
        return finding_id

    async def record_many(self, findings: Iterable[NewFinding]) -> list[uuid.UUID]:
        """Insert findings in one statement; returns their ids in the given order."""
        rows: list[dict[str, Any]] = [
            {
                "id": uuid.uuid4(),
                "agent": self.agent,
                "kind": f.kind,
                "claim_ids": list(f.claim_ids),
                "payload": f.payload,
                "expires_at": func.now() + FINDING_TTL,
            }
            for f in findings
        ]
        if not rows:
            return []
        await self.session.execute(insert(Finding).values(rows))
        return [r["id"] for r in rows]

    async def purge(self, batch_size: int) -> int:
        """Delete up to `batch_size` expired findings (any agent's; rows another transaction
        holds are skipped); how many."""
        doomed = (
            select(Finding.id)
            .where(Finding.expires_at <= func.now())
            .limit(batch_size)
            .with_for_update(skip_locked=True)
        )
        result = await self.session.execute(
            delete(Finding).where(Finding.id.in_(doomed.scalar_subquery())).returning(Finding.id)
        )
        return len(result.scalars().all())

    def kept_by(self, agent: str) -> Findings:
        """The findings of `agent` in the same session (the verifier records a watched claim's
        finding in the replicator's name: the watch schedule is its)."""
        return Findings(self.session, agent)

    async def discredited(self, finding_id: uuid.UUID) -> set[str] | None:
        """The sources a finding says no longer back its claim (`retracted` and `lost` in its
        payload; none once it expired); None while the finding is not visible to this read (its
        transaction has not committed yet, or a replica lags)."""
        found = (
            await self.session.execute(
                select(Finding.payload, Finding.expires_at > func.now()).where(
                    Finding.id == finding_id
                )
            )
        ).one_or_none()
        if found is None:
            return None
        payload, live = found
        if not (live and payload):
            return set()
        return set(payload.get("retracted") or []) | set(payload.get("lost") or [])

    async def get(self, finding_id: uuid.UUID) -> FindingView | None:
        row = await self.session.scalar(select(Finding).where(Finding.id == finding_id, _alive()))
        return FindingView.of(row) if row is not None else None

    async def open_for_claims(
        self, claim_ids: Sequence[uuid.UUID], kinds: Iterable[str] | None = None
    ) -> list[FindingView]:
        """Unresolved findings of this agent naming any of `claim_ids` (uses the GIN index)."""
        if not claim_ids:
            return []
        query = select(Finding).where(
            Finding.agent == self.agent,
            Finding.resolved_at.is_(None),
            _alive(),
            Finding.claim_ids.overlap(list(claim_ids)),
        )
        if kinds is not None:
            query = query.where(Finding.kind.in_(list(kinds)))
        return [
            FindingView.of(r)
            for r in await self.session.scalars(query.order_by(Finding.created_at))
        ]

    async def recent(self, *, limit: int = 100, include_resolved: bool = True) -> list[FindingView]:
        """This agent's unexpired findings, newest first."""
        return await self.browse(agent=self.agent, unresolved=not include_resolved, limit=limit)

    async def browse(
        self,
        *,
        agent: str | None = None,
        kind: str | None = None,
        unresolved: bool = False,
        limit: int = 100,
    ) -> list[FindingView]:
        """Every agent's unexpired findings newest first (what a reader browses), narrowed by
        agent, kind and (`unresolved`) those nobody resolved yet."""
        query = select(Finding).where(_alive())
        if agent:
            query = query.where(Finding.agent == agent)
        if kind:
            query = query.where(Finding.kind == kind)
        if unresolved:
            query = query.where(Finding.resolved_at.is_(None))
        rows = await self.session.scalars(query.order_by(Finding.created_at.desc()).limit(limit))
        return [FindingView.of(r) for r in rows]

    async def count_since(self, since: timedelta) -> int:
        """How many findings this agent recorded in the last `since` (for status: the 24 h window)."""
        total = await self.session.scalar(
            select(func.count())
            .select_from(Finding)
            .where(Finding.agent == self.agent, _alive(), Finding.created_at > func.now() - since)
        )
        return int(total or 0)

    async def mark_resolved(self, finding_id: uuid.UUID) -> bool:
        """Resolve one finding; False unless it is this agent's, unresolved and unexpired."""
        return bool(await self.mark_resolved_many([finding_id]))

    async def mark_resolved_many(self, finding_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
        """Resolve the guarded subset of `finding_ids`; returns the ids actually resolved."""
        if not finding_ids:
            return []
        result = await self.session.execute(
            update(Finding)
            .where(
                Finding.id.in_(list(finding_ids)),
                Finding.agent == self.agent,
                Finding.resolved_at.is_(None),
                _alive(),
            )
            .values(resolved_at=func.now(), resolved_by=self.agent)
            .returning(Finding.id)
        )
        return list(result.scalars())

    async def settle(
        self,
        *,
        opened: Sequence[NewFinding],
        resolve: dict[uuid.UUID, dict[str, Any]],
        opened_action: AuditAction,
        resolved_action: AuditAction,
        context: dict[str, Any] | None = None,
    ) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
        """Record `opened`, resolve the guarded subset of `resolve` (one statement, one round trip),
        and write one audit row per change through the ledger's audit writer (`Ledger.audit_many`,
        a second statement) — in the caller's transaction, which must be a real one: the findings and
        their audit rows commit together or not at all.

        `resolve` maps a finding id to extra audit payload; each audit row carries the finding id
        plus `context` in `subject_ids` and names the finding's first claim. Returns (opened ids,
        resolved ids). The same rules as the other moves: insert-only, 180-day TTL, only the
        owner's unresolved, unexpired findings are resolved.
        """
        new = {uuid.uuid4(): f for f in opened}
        rows = [
            {
                "id": str(finding_id),
                "kind": f.kind,
                "claim_ids": [str(c) for c in f.claim_ids],
                "payload": storable(f.payload),
            }
            for finding_id, f in new.items()
        ]
        result = await self.session.execute(
            SETTLE,
            {
                "opened": json.dumps(rows, default=str),
                "agent": self.agent,
                "ttl_days": FINDING_TTL.days,
                "resolve": list(resolve),
            },
        )
        changed = result.all()
        scope = context or {}
        entries = [
            audit.Entry(
                opened_action if row.opened else resolved_action,
                claim_id=row.claim_ids[0] if row.claim_ids else None,
                subject_ids={"finding_id": row.id, **scope},
                payload=(
                    {"kind": row.kind, **new[row.id].payload}
                    if row.opened
                    else {"finding_id": row.id, "kind": row.kind, **resolve.get(row.id, {})}
                ),
            )
            for row in changed
        ]
        await self.audit_many(entries)
        return [row.id for row in changed if row.opened], [
            row.id for row in changed if not row.opened
        ]


SETTLE = text(
    """
WITH new AS (
    SELECT * FROM jsonb_to_recordset(CAST(:opened AS jsonb)) AS n(id uuid, kind text, claim_ids uuid[], payload jsonb)
),
opened AS (
    INSERT INTO findings (id, agent, kind, claim_ids, payload, created_at, expires_at)
    SELECT new.id, :agent, new.kind, new.claim_ids, new.payload, now(), now() + make_interval(days => :ttl_days)
    FROM new
    RETURNING id, kind, claim_ids
),
resolved AS (
    UPDATE findings SET resolved_at = now(), resolved_by = :agent
    WHERE id = ANY(CAST(:resolve AS uuid[])) AND agent = :agent AND resolved_at IS NULL AND expires_at > now()
    RETURNING id, kind, claim_ids
)
SELECT true AS opened, id, kind, claim_ids FROM opened
UNION ALL
SELECT false, id, kind, claim_ids FROM resolved
"""
)


async def purge_expired(
    ledger: Ledger,
    *,
    batch_size: int = 1000,
    max_batches: int | None = None,
) -> int:
    """Delete expired findings, `batch_size` rows per unit of work; returns how many were removed.

    Short transactions keep locks brief; `SKIP LOCKED` lets two replicas purge side by side.
    """
    removed = 0
    batches = 0
    while max_batches is None or batches < max_batches:
        async with ledger.unit_of_work(service="librarian") as uow:
            count = await uow.findings.purge(batch_size)
        removed += count
        batches += 1
        if count < batch_size:
            break
    return removed
