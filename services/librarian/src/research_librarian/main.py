"""Librarian service (periodic, LLM-free): keeps the provenance and decay of active claims honest.

Each run: purge expired findings (the findings maintenance step) → walk the active claims in
creation order, `batch_size` per statement, from where the last run stopped → assess (set-based
SQL, repository) → prepare (rows → `ClaimHealth`) → experiment (triage, pure logic) → reshape
(findings and resolutions to write) → repository (record / resolve findings + their audit rows,
one transaction per `write_every` changes).
Operator verbs arrive on `research.control.librarian.<verb>`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from faststream import FastStream

from research_agents import RunContext
from research_agents.app import schedule
from research_agents.runs import RunBook
from research_ledger import Ledger
from research_ledger.findings import purge_expired
from research_librarian import experiment, prepare, reshape
from research_librarian.bootstrap import bootstrap
from research_librarian.repository import SERVICE, START, Cursor, Walk, apply
from research_librarian.settings import LibrarianServiceSettings, LibrarianSettings
from research_platform.app import service_app
from research_platform.logging import get_logger
from research_platform.service import run_service

log = get_logger(__name__)


@dataclass
class Librarian:
    """One librarian run, resumable: the cursor of the last run is kept in its counts."""

    ledger: Ledger  # its `reading()`: the walk's one autocommit connection (see `walker`)
    settings: LibrarianSettings

    async def run(self, ctx: RunContext) -> dict[str, Any]:
        ctx.counts["purged"] = await purge_expired(
            self.ledger,
            batch_size=self.settings.purge_batch_size,
            max_batches=self.settings.purge_batches_per_run,
        )
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            # the run book is the agent's (`research_agents.runs`)
            after = cursor_of((await RunBook(uow.session, SERVICE).last_counts()).get("cursor"))
        limit = self.settings.batches_per_run
        batches = 0
        async with self.walker(ctx) as walk:
            while limit == 0 or batches < limit:
                await ctx.checkpoint()
                after, seen = await self.validate_batch(after, walk, ctx)
                batches += 1
                ctx.counts["cursor"] = [after[0].isoformat(), str(after[1])]
                if seen < self.settings.batch_size:  # end of the ledger: the next run starts over
                    ctx.counts["cursor"] = None
                    ctx.bump("passes_completed")
                    break
        ctx.counts["batches"] = batches
        return ctx.counts

    @asynccontextmanager
    async def walker(self, ctx: RunContext | None = None) -> AsyncIterator[Walk]:
        """One autocommit connection for a whole walk (no checkout per batch), a prepared
        assessment with a generic plan, and the buffered changes written on the way out."""
        async with self.ledger.reading(service=SERVICE) as uow:
            provenance = uow.provenance
            await provenance.plan_generically()
            await provenance.prepare_walk()
            walk = Walk(
                provenance,
                lambda changes, run_id: apply(self.ledger, changes, run_id),
                self.settings.write_every,
                ctx.run_id if ctx else None,
            )
            try:
                yield walk
                await self.write(walk, ctx)
            finally:
                if walk.pending:  # cancelled: keep what was found
                    await self.write(walk, ctx)
                await provenance.plan_generically(False)

    async def write(self, walk: Walk, ctx: RunContext | None) -> None:
        opened, resolved = await walk.flush()
        if ctx is not None:
            ctx.bump("findings", opened)
            ctx.bump("resolved", resolved)

    async def validate_batch(
        self, after: Cursor, walk: Walk, ctx: RunContext | None = None
    ) -> tuple[Cursor, int]:
        """Validate the next batch after `after`; returns (new cursor, claims seen).

        One statement assesses the batch (returning only the claims that may need a change); its changes join the walk's buffer, written (findings +
        resolutions + audit rows in one transaction) every `write_every`
        changes. No wrapping transaction is needed: the run-lock makes this run the only writer
        of librarian findings, and resolving is guarded anyway.
        """
        assessed = await walk.provenance.assess(
            after, self.settings.batch_size, self.settings.decay_window_days
        )
        if not assessed.seen:
            return START, 0
        batch = [prepare.claim_health(row) for row in assessed.rows]
        changes = experiment.triage(batch)
        walk.add(reshape.settlement(changes))
        if walk.due:
            await self.write(walk, ctx)
        if ctx is not None:
            ctx.bump("claims", assessed.seen)
            # Claims the assessment left out are healthy and unflagged (nothing to triage).
            ctx.bump("healthy", changes.healthy + assessed.seen - len(batch))
        return assessed.last, assessed.seen


def cursor_of(saved: Any) -> Cursor:
    """The cursor a previous run left in its counts (`[created_at iso, id]`), or the start."""
    if not saved or not isinstance(saved, list | tuple) or len(saved) != 2:
        return START
    try:
        return datetime.fromisoformat(saved[0]), uuid.UUID(saved[1])
    except (TypeError, ValueError):
        return START


def create_app(settings: LibrarianServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    app, ctx = service_app(settings, SERVICE)
    schedule(
        ctx, deps.librarian.schedule, lambda ctx: Librarian(deps.ledger(ctx), deps.librarian).run
    )
    return app


def run() -> None:
    run_service(SERVICE, create_app, LibrarianServiceSettings)


if __name__ == "__main__":
    run()
