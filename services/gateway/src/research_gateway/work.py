"""A key's own work: every question, review, verification and source list it asked, newest first.

    GET /api/research/v1/my-work?q=heart&kind=review&limit=100

Questions are the tasks the key submitted (`research_tasks.owner_key_id`); the three report kinds
are the reports it asked for (`reports.owner.key_id`, the owner `ownership.owner_of` records). A
task or report with no owner (from the bus, or from before owners were kept) is nobody's work and
is listed for no key. `q` narrows to the items whose question, topic, claim or prompt holds it
(case-insensitive; `uow.work`); each item is titled by that text, not by its id.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from research_gateway.auth import AUTH_RESPONSES, Reader
from research_gateway.deps import API, Reading
from research_gateway.storable import STORABLE, TEXT_QUERY

router = APIRouter(prefix=API, tags=["reports"], responses=AUTH_RESPONSES)
WorkKind = Literal["question", "review", "verification", "source_list"]
REPORT_KINDS = ("review", "verification", "source_list")


class WorkItem(BaseModel):
    """One thing the key asked: `id` is the task id (a question) or the report id (the others)."""

    kind: WorkKind
    id: uuid.UUID
    title: str
    status: str
    run_id: str | None = None
    created_at: datetime
    updated_at: datetime


@router.get("/my-work", response_model=list[WorkItem])
async def my_work(
    caller: Reader,
    uow: Reading,
    q: Annotated[str | None, TEXT_QUERY, Query(max_length=200, json_schema_extra=STORABLE)] = None,
    kind: WorkKind | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[WorkItem]:
    """Every question, review, verification and source list this key asked, newest first,
    titled by its question, topic, claim or prompt; `q` keeps those whose text holds it."""
    needle = (q or "").strip()
    items: list[WorkItem] = []
    if kind in (None, "question"):
        for task in await uow.work.questions(caller.key_id, containing=needle, limit=limit):
            items.append(
                WorkItem(
                    kind="question",
                    id=task.id,
                    title=task.question,
                    status=task.status,
                    created_at=task.created_at,
                    updated_at=task.updated_at,
                )
            )
    if kind != "question":
        kinds = [kind] if kind else list(REPORT_KINDS)
        for report in await uow.work.reports(
            caller.key_id, kinds=kinds, containing=needle, limit=limit
        ):
            items.append(
                WorkItem(
                    kind=report.kind,  # one of REPORT_KINDS (the query's filter)
                    id=report.id,
                    title=report.subject,
                    status=report.status,
                    run_id=report.run_id,
                    created_at=report.created_at,
                    updated_at=report.updated_at,
                )
            )
    items.sort(key=lambda item: item.created_at, reverse=True)
    return items[:limit]
