"""What the librarian writes, and its walk over the ledger.

The assessment of a batch of active claims is the ledger's (`uow.provenance`, one set-based
statement per batch on the walk's autocommit unit of work). `apply` writes a reshaped
`Settlement` in a unit of work of its own: records the new findings and resolves the stale ones
(one statement, `uow.findings.settle`) with their audit rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from research_ledger import AuditAction, Ledger
from research_ledger.provenance import START, Assessment, Cursor, Provenance
from research_librarian.reshape import Settlement

SERVICE = "librarian"

__all__ = ["SERVICE", "START", "Assessment", "Cursor", "Walk", "Write", "apply"]

# (changes, run id) → (opened, resolved): how a walk writes its buffer
Write = Callable[[Settlement, uuid.UUID | None], Awaitable[tuple[int, int]]]


async def apply(
    ledger: Ledger, changes: Settlement, run_id: uuid.UUID | None = None
) -> tuple[int, int]:
    """Record opened findings and resolve stale ones, each with its audit row, in one unit of
    work; returns (opened, resolved)."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        opened, resolved = await uow.findings.settle(
            opened=changes.opened,
            resolve=changes.resolve,
            opened_action=AuditAction.LIBRARIAN_FINDING,
            resolved_action=AuditAction.LIBRARIAN_RESOLVED,
            context={"run_id": run_id},
        )
    return len(opened), len(resolved)


class Walk:
    """One walk over the ledger: the prepared assessment (`provenance`, on the walk's unit of
    work) plus a buffer of changes.

    Changes are written `write_every` at a time (one `settle` unit of work each, through
    `write`: findings, resolutions and their audit rows together) instead of once per batch;
    `flush` writes the rest. A walk that dies before flushing loses only unwritten changes,
    which the next pass finds again.
    """

    def __init__(
        self,
        provenance: Provenance,
        write: Write,
        write_every: int,
        run_id: uuid.UUID | None = None,
    ) -> None:
        self.provenance = provenance
        self.write = write
        self.write_every = write_every
        self.run_id = run_id
        self.pending = Settlement()
        self.opened = 0
        self.resolved = 0
        self.analyzed_at = 0  # this walk's findings written when it last analyzed the table

    def add(self, changes: Settlement) -> None:
        self.pending.extend(changes)

    @property
    def due(self) -> bool:
        return len(self.pending) >= self.write_every

    async def flush(self) -> tuple[int, int]:
        """Write the buffered changes; returns (opened, resolved) by this flush."""
        if not self.pending:
            return 0, 0
        opened, resolved = await self.write(self.pending, self.run_id)
        self.pending = Settlement()
        written = self.opened + opened
        if written >= 2 * self.analyzed_at:
            # Until `findings` has statistics, the planner prices the GIN probe
            # `claim_ids @> ARRAY[id]` with a default selectivity and, the table being small when
            # the walk began, scans all of it for every claim: the first pass over a ledger went
            # quadratic (1 M claims: 91 s against 7.9 s for the raw statement). So the walk
            # ANALYZEs the table each time its own findings have doubled (a handful of times per
            # pass; ANALYZE samples at most 30,000 rows) and re-plans the assessment.
            await self.provenance.analyze_findings()
            await self.provenance.prepare_walk()
            self.analyzed_at = max(written, 1)
        self.opened += opened
        self.resolved += resolved
        return opened, resolved
