"""What one key asked for (`uow.work`): its questions (tasks it owns) and its reports (reviews,
verifications, source lists whose owner it is) — the console's My work. Nothing here writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select

from research_ledger.base import LedgerBase
from research_ledger.tables import ReportRow, ResearchTask


def _contains(needle: str) -> str:
    """A LIKE pattern matching `needle` anywhere, its own wildcards taken literally."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Work(LedgerBase):
    """A key's own tasks and reports, newest first, in the unit of work's session."""

    async def questions(
        self, key_id: uuid.UUID, *, containing: str = "", limit: int = 100
    ) -> list[ResearchTask]:
        """The tasks `key_id` submitted, newest first; `containing` keeps those whose question
        holds it (case-insensitive)."""
        tasks = select(ResearchTask).where(ResearchTask.owner_key_id == key_id)
        if containing:
            tasks = tasks.where(ResearchTask.question.ilike(_contains(containing), escape="\\"))
        return list(
            await self.session.scalars(tasks.order_by(ResearchTask.created_at.desc()).limit(limit))
        )

    async def reports(
        self, key_id: uuid.UUID, *, kinds: Sequence[str], containing: str = "", limit: int = 100
    ) -> list[ReportRow]:
        """The reports of `kinds` that `key_id` owns, newest first; `containing` keeps those
        whose subject holds it (case-insensitive)."""
        reports = select(ReportRow).where(
            ReportRow.owner["key_id"].astext == str(key_id), ReportRow.kind.in_(list(kinds))
        )
        if containing:
            reports = reports.where(ReportRow.subject.ilike(_contains(containing), escape="\\"))
        return list(
            await self.session.scalars(reports.order_by(ReportRow.created_at.desc()).limit(limit))
        )
