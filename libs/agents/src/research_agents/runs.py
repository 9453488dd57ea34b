"""The run book of a periodic agent: its `agent_runs` rows and its operator switches.

`agent_runs` holds one row per run (running → completed | cancelled | failed | interrupted |
abandoned). `agent_controls` holds what every replica must obey: the pause switch and the id
of a run an operator asked to cancel.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from research_platform.tables import AgentControl, AgentRun


@dataclass(frozen=True)
class RunView:
    """One run as status reports it."""

    id: uuid.UUID
    trigger: str
    started_at: datetime
    finished_at: datetime | None
    outcome: str
    counts: dict[str, Any]
    error: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": str(self.id),
            "trigger": self.trigger,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "outcome": self.outcome,
            "counts": self.counts,
            "error": self.error,
        }


@dataclass(frozen=True)
class Switches:
    """The operator switches of an agent as last written."""

    paused: bool = False
    cancel_run_id: uuid.UUID | None = None


class RunBook:
    """Runs and switches of one agent, in the caller's session."""

    def __init__(self, session: AsyncSession, agent: str) -> None:
        self.session = session
        self.agent = agent

    async def begin_run(self, trigger: str) -> uuid.UUID:
        """Record a new run; any earlier `running` row is abandoned (the caller holds the run-lock)."""
        await self.session.execute(
            update(AgentRun)
            .where(AgentRun.agent == self.agent, AgentRun.outcome == "running")
            .values(
                outcome="abandoned",
                finished_at=func.now(),
                error="its process stopped without finishing it",
            )
        )
        run_id = uuid.uuid4()
        self.session.add(
            AgentRun(id=run_id, agent=self.agent, trigger=trigger, outcome="running", counts={})
        )
        return run_id

    async def finish_run(
        self, run_id: uuid.UUID, outcome: str, counts: dict[str, Any], error: str | None = None
    ) -> None:
        await self.session.execute(
            update(AgentRun)
            .where(AgentRun.id == run_id)
            .values(
                outcome=outcome,
                counts=counts,
                error=(error or None) and error[:4000],
                finished_at=func.now(),
            )
        )

    async def current(self) -> RunView | None:
        """The run in flight according to the run book (trust it together with the run-lock)."""
        row = await self.session.scalar(
            select(AgentRun)
            .where(AgentRun.agent == self.agent, AgentRun.outcome == "running")
            .order_by(AgentRun.started_at.desc())
            .limit(1)
        )
        return _view(row)

    async def last_finished(self) -> RunView | None:
        row = await self.session.scalar(
            select(AgentRun)
            .where(AgentRun.agent == self.agent, AgentRun.outcome != "running")
            .order_by(AgentRun.started_at.desc())
            .limit(1)
        )
        return _view(row)

    async def seconds_since_last_start(self) -> float | None:
        age = await self.session.scalar(
            select(func.extract("epoch", func.now() - func.max(AgentRun.started_at))).where(
                AgentRun.agent == self.agent
            )
        )
        return None if age is None else float(age)

    async def last_counts(self, outcome: str | None = None) -> dict[str, Any]:
        """Counts of the latest finished run (agents keep cursors there between runs)."""
        query = select(AgentRun.counts).where(
            AgentRun.agent == self.agent, AgentRun.outcome != "running"
        )
        if outcome is not None:
            query = query.where(AgentRun.outcome == outcome)
        counts = await self.session.scalar(query.order_by(AgentRun.started_at.desc()).limit(1))
        return dict(counts or {})

    async def switches(self) -> Switches:
        row = await self.session.get(AgentControl, self.agent, populate_existing=True)
        if row is None:
            return Switches()
        return Switches(paused=row.paused, cancel_run_id=row.cancel_run_id)

    async def set_paused(self, paused: bool, actor: str | None) -> None:
        await self._upsert({"paused": paused}, actor)

    async def request_cancel(self, run_id: uuid.UUID, actor: str | None) -> None:
        await self._upsert({"cancel_run_id": run_id}, actor)

    async def clear_cancel(self, run_id: uuid.UUID) -> None:
        await self.session.execute(
            update(AgentControl)
            .where(AgentControl.agent == self.agent, AgentControl.cancel_run_id == run_id)
            .values(cancel_run_id=None, updated_at=func.now())
        )

    async def _upsert(self, values: dict[str, Any], actor: str | None) -> None:
        stmt = insert(AgentControl).values(agent=self.agent, updated_by=actor, **values)
        await self.session.execute(
            stmt.on_conflict_do_update(
                index_elements=[AgentControl.agent],
                set_={**values, "updated_by": actor, "updated_at": func.now()},
            )
        )


def _view(row: AgentRun | None) -> RunView | None:
    if row is None:
        return None
    return RunView(
        row.id,
        row.trigger,
        row.started_at,
        row.finished_at,
        row.outcome,
        dict(row.counts or {}),
        row.error,
    )
