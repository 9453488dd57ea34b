"""Task submission (idempotent) and the task / claim read routes.

`POST /tasks` publishes first and commits second. The task id comes from the client's
`Idempotency-Key` (an HMAC of the caller's key id and the header under the installation secret,
`research_ledger.task_id_for_key`) or its own `task_id`, and the message carries `Nats-Msg-Id:
task-<id>`, so:
- the same key twice from one caller → the same task (202 the first time, 200 after), never a
  second one; the same key from another caller is another task (neither learns of the other);
- a `task_id` another key's task holds → 409, telling nothing of that task;
- a new task takes a slot of the caller's quota (`quotas.py`; 429 past it), a repeat does not;
- the task records its owner (the key that submitted it);
- the bus down → 503 and no row (nothing to orphan); a retry with the key publishes again;
- a publish whose commit failed → JetStream drops the retry's duplicate, and the researcher
  creates the row itself when it starts the task (it is idempotent per task id).
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Response, status
from prometheus_client import Counter

from research_contracts import RunResearch
from research_contracts.views import ClaimView, TaskAccepted, TaskView
from research_gateway.auth import AUTH_RESPONSES, Caller, Researcher, require
from research_gateway.deps import (
    API,
    SERVICE,
    Current,
    LedgerDoor,
    Publishers,
    Reading,
    or_404,
    publish_or_503,
)
from research_gateway.quotas import QUOTA_RESPONSES, KeyQuotas
from research_gateway.schemas import TaskSubmission
from research_ledger import task_id_for_key
from research_ledger.deidentified import clean, clean_or_none
from research_platform.logging import get_logger

log = get_logger(__name__)
TASKS_SUBMITTED = Counter("research_tasks_submitted_total", "Tasks accepted over HTTP", ["tier"])

router = APIRouter(prefix=API, tags=["tasks"], responses=AUTH_RESPONSES)
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        description="Same key → same task, never a second one.",
    ),
]


def _task_id(body: TaskSubmission, key: str | None, caller: Caller) -> uuid.UUID:
    if key is None:
        return body.task_id or uuid.uuid4()
    derived = task_id_for_key(key, caller.key_id)
    if body.task_id is not None and body.task_id != derived:
        raise HTTPException(
            status.HTTP_409_CONFLICT, "task_id and Idempotency-Key name different tasks"
        )
    return derived


@router.post(
    "/tasks",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=TaskAccepted,
    responses={
        200: {
            "description": "a repeat of an earlier submission (same key or task_id): the same task"
        },
        409: {
            "description": "the key or task_id names another question, or they name different "
            "tasks, or the task_id is another key's"
        },
        **QUOTA_RESPONSES,
        503: {
            "description": "the task bus is unavailable; nothing was stored, retry with the same key"
        },
    },
)
async def submit_task(
    body: TaskSubmission,
    ledger: LedgerDoor,
    bus: Publishers,
    response: Response,
    caller: Researcher,
    quotas: KeyQuotas,
    idempotency_key: IdempotencyKey = None,
) -> TaskAccepted:
    """Accept a research question; the pipeline answers asynchronously (poll the task)."""
    task = RunResearch(
        **body.model_dump(exclude={"task_id"}),
        task_id=_task_id(body, idempotency_key, caller),
        origin="api",
    )
    async with ledger.unit_of_work(service=SERVICE) as uow:
        known = await uow.tasks.get(task.task_id)
        if known is not None:
            if known.owner_key_id is not None and known.owner_key_id != caller.key_id:
                raise HTTPException(status.HTTP_409_CONFLICT, "this task_id is taken")
            if (
                known.question != task.question
            ):  # both de-identified: the command was, when it was parsed
                raise HTTPException(
                    status.HTTP_409_CONFLICT, "this key or task_id was used for another question"
                )
            response.status_code = status.HTTP_200_OK
            return TaskAccepted(task_id=known.id, status=known.status)
    clean(
        task.question, what="a task's question"
    )  # the ledger's own check, before anything is published
    clean_or_none(task.entity, what="a task's entity")
    async with quotas.taken(caller, "task", subject_id=task.task_id):
        await publish_or_503(
            bus.tasks[task.tier],
            task,
            msg_id=f"task-{task.task_id}",
            what="task",
            unavailable="the task bus is unavailable; retry",
        )
    async with ledger.unit_of_work(service=SERVICE) as uow:
        submitted = await uow.tasks.submit(
            task, idempotency_key=idempotency_key, owner_key_id=caller.key_id
        )
    if not submitted.created:  # a concurrent request with the same key got there first
        response.status_code = status.HTTP_200_OK
    else:
        TASKS_SUBMITTED.labels(task.tier.value).inc()
    return TaskAccepted(task_id=task.task_id)


@router.get(
    "/tasks/{task_id}",
    response_model=TaskView,
    dependencies=[Depends(require("reader"))],
    responses={404: {"description": "no such task"}},
)
async def get_task(task_id: uuid.UUID, uow: Current) -> TaskView:
    """The task, its status (`failed` with the reason in `error`) and its claim once proposed."""
    return or_404(await uow.claim_views.task(task_id), f"no task {task_id}")


@router.get(
    "/claims/{claim_id}",
    response_model=ClaimView,
    dependencies=[Depends(require("reader"))],
    responses={404: {"description": "no such claim"}},
)
async def get_claim(claim_id: uuid.UUID, uow: Reading) -> ClaimView:
    return or_404(await uow.claim_views.claim(claim_id), f"no claim {claim_id}")
