"""The task lifecycle (`Ledger.tasks`): submitted (queued) → researching → claimed, or failed with a reason.

A task row is created by whoever sees the task first: the gateway on submission, or the
researcher when the task came straight from the bus (or overtook the gateway's commit). Both
paths are idempotent on the task id, so a redelivery or a retried submission never makes a
second row. `fail` is terminal and idempotent: it never overwrites `claimed` or an earlier
failure.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert

from research_contracts import RunResearch
from research_ledger.audit import storable
from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.deidentified import clean, clean_or_none
from research_ledger.status import TERMINAL_TASK_STATES, TaskStatus
from research_ledger.tables import AuditEvent, ResearchTask
from research_platform import installation

REASON_LIMIT = 2000


def task_id_for_key(idempotency_key: str, owner: uuid.UUID | None) -> uuid.UUID:
    """The task id `owner`'s (an API key id's) `Idempotency-Key` names: the same key from the same
    caller always yields the same id, on any replica; the same key from another caller is another
    task. An HMAC under the installation secret (`research_platform.installation`), so the id
    tells a reader nothing about the key (a plain hash of `MRN-00123456` could be enumerated).
    Tasks submitted before kept their ids (a uuid5 of the key alone)."""
    keyed = installation.keyed(f"task:{owner or ''}:{idempotency_key}")
    return uuid.UUID(bytes=keyed[:16], version=4)


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """`created` is False when the task was already submitted (a retry with the same key)."""

    task_id: uuid.UUID
    created: bool


def _row(task: RunResearch, status: TaskStatus) -> dict[str, object]:
    """The stored task: question and entity as de-identified at the boundary (refused otherwise),
    the patient context never stored."""
    question, entity = (
        clean(task.question, what="a task's question"),
        clean_or_none(task.entity, what="a task's entity"),
    )
    request = task.model_dump(mode="json", exclude={"patient_context"})
    request.update(question=question, entity=entity)
    return {
        "id": task.task_id,
        "question": question,
        "entity": entity,
        "tier": task.tier.value,
        "status": status.value,
        "origin": task.origin,
        "request": request,
    }


class Tasks(LedgerBase):
    """Intent methods on `research_tasks` (`Ledger.tasks`)."""

    async def get(self, task_id: uuid.UUID) -> ResearchTask | None:
        return await self.session.get(ResearchTask, task_id)

    async def submit(
        self,
        task: RunResearch,
        *,
        idempotency_key: str | None = None,
        owner_key_id: uuid.UUID | None = None,
    ) -> SubmitResult:
        """Record a submitted task (queued), owned by `owner_key_id`, with its audit row; a repeat
        of the same task id is a no-op.

        The researcher may have stored the row first (it consumed the message before this commit):
        the owner is still recorded and the submission still audited once.
        """
        inserted = await self.session.scalar(
            insert(ResearchTask)
            .values(**_row(task, TaskStatus.queued), owner_key_id=owner_key_id)
            .on_conflict_do_nothing()
            .returning(ResearchTask.id)
        )
        if inserted is None and owner_key_id is not None:
            await self.session.execute(
                update(ResearchTask)
                .where(ResearchTask.id == task.task_id, ResearchTask.owner_key_id.is_(None))
                .values(owner_key_id=owner_key_id)
            )
        if inserted is None and await self._audited(task.task_id, AuditAction.TASK_SUBMITTED):
            return SubmitResult(task.task_id, created=False)
        payload: dict[str, object] = {"tier": task.tier.value}
        if idempotency_key is not None:
            payload["idempotency_key"] = idempotency_key
        self.audit(AuditAction.TASK_SUBMITTED, task_id=task.task_id, payload=payload)
        return SubmitResult(task.task_id, created=True)

    async def start(self, task: RunResearch, *, waited_s: float = 0.0) -> bool:
        """Record that work on `task` began (creating the row when it came straight from the bus).

        Returns False, changing nothing, when the task already ended (claimed or failed).
        """
        stmt = insert(ResearchTask).values(**_row(task, TaskStatus.researching))
        started = await self.session.scalar(
            stmt.on_conflict_do_update(
                index_elements=[ResearchTask.id],
                set_={
                    "status": TaskStatus.researching.value,
                    "entity": stmt.excluded.entity,
                    "updated_at": stmt.excluded.updated_at,
                },
                where=ResearchTask.status.not_in([s.value for s in TERMINAL_TASK_STATES]),
            ).returning(ResearchTask.id)
        )
        if started is None:
            return False
        self.audit(
            AuditAction.TASK_STARTED,
            task_id=task.task_id,
            payload={"tier": task.tier.value, "waited_s": round(waited_s, 3)},
        )
        return True

    async def mark_claimed(self, task_id: uuid.UUID) -> None:
        """The task yielded its claim (called by `propose`, in the same transaction)."""
        await self.session.execute(
            update(ResearchTask)
            .where(ResearchTask.id == task_id, ResearchTask.status != TaskStatus.failed.value)
            .values(status=TaskStatus.claimed.value, updated_at=func.now())
        )

    async def fail(self, task_id: uuid.UUID, reason: str) -> bool:
        """Mark the task `failed` with `reason`; False (no change, no audit) when it already ended or is unknown."""
        reason = storable(reason[:REASON_LIMIT])  # text columns refuse NUL too
        row = (
            await self.session.execute(
                select(ResearchTask.status).where(ResearchTask.id == task_id).with_for_update()
            )
        ).one_or_none()
        if row is None or row.status in TERMINAL_TASK_STATES:
            return False
        await self.session.execute(
            update(ResearchTask)
            .where(ResearchTask.id == task_id)
            .values(status=TaskStatus.failed.value, error=reason, updated_at=func.now())
        )
        self.audit(
            AuditAction.TASK_FAILED,
            task_id=task_id,
            payload={"reason": reason, "previous_status": row.status},
        )
        return True

    async def _audited(self, task_id: uuid.UUID, action: AuditAction) -> bool:
        found = await self.session.scalar(
            select(AuditEvent.id)
            .where(AuditEvent.task_id == task_id, AuditEvent.action == action.value)
            .limit(1)
        )
        return found is not None
