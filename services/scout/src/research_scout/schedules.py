"""The schedule tick: fire every due source-list schedule once, through the shared scheduler base.

`research_agents.Scheduler("scout", …)` runs `fire_due` on its interval under the scout's
run-lock (a Postgres advisory lock), so across replicas one tick at a time does the firing;
inside it, `uow.source_lists.due` + `claim_due` move each schedule's `next_run_at` on in the same
transaction that read it (`FOR UPDATE SKIP LOCKED`, compare-and-set), so a schedule fires at
most once per due time even if two ticks ever overlapped. Each fired schedule runs in process
as a new run of the list (trigger `schedule`), with the request stored on its report.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from research_agents import RunContext
from research_contracts.sourcelists import RequestSourceList
from research_platform.logging import get_logger
from research_scout.pipeline import Scout
from research_scout.repository import SERVICE

log = get_logger(__name__)


def scheduled_run_id(source_list_id: uuid.UUID, due_at: datetime) -> str:
    """One run id per (list, due time): a re-fired occurrence names the same run and is skipped."""
    return f"sl-{uuid.uuid5(source_list_id, due_at.isoformat()).hex[:20]}"


@dataclass
class ScheduleTick:
    scout: Scout

    async def fire_due(self, ctx: RunContext | None = None) -> dict[str, Any]:
        """Claim every due schedule, then run each claimed list; returns counts."""
        now = datetime.now(UTC)
        commands: list[RequestSourceList] = []
        async with self.scout.ledger.unit_of_work(service=SERVICE) as uow:
            for due in await uow.source_lists.due(now):
                if await uow.source_lists.claim_due(due, now) is None:
                    continue  # another tick moved it on
                report = await uow.reports.get(due.source_list_id, kind="source_list")
                if report is None:
                    continue
                commands.append(
                    RequestSourceList.model_validate(
                        {
                            **report.request,
                            "source_list_id": due.source_list_id,
                            "trigger": "schedule",
                            "run_id": scheduled_run_id(due.source_list_id, due.next_run_at),
                        }
                    )
                )
        fired = failed = 0
        for command in commands:
            if ctx is not None:
                await ctx.checkpoint()
            outcome = await self.scout.handle(command)
            fired += 1
            failed += 1 if outcome.error else 0
        if commands:
            log.info("schedules fired", fired=fired, failed=failed)
        return {"fired": fired, "failed": failed}
