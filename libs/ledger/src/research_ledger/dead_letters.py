"""The ledger's side of a dead-lettered message: one audit row, and the task failed with the reason.

`research_platform.delivery.Delivery` parks the bytes on the dead-letter stream and then calls
the recorder built here (the platform cannot import the ledger: the ledger stands on it). The
audit row carries subject, reason, digest and size, never the body: the body may hold PHI, or
bytes Postgres rejects (`\\u0000` in jsonb), and it already waits on the stream for an operator.
A task whose message was dead-lettered is `failed` with that reason, so the API and
`research-engine demo` report it instead of waiting for it; so is the report of a review or
verification command (its `review_id` / `verification_id`), which would otherwise read `running`
for ever when, say, the corpus tools stayed down through every delivery.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_ledger import AuditAction, Ledger
from research_platform.db import transaction
from research_platform.delivery import DeadLetter, Recorder


def recorder(sessions: async_sessionmaker[AsyncSession], service: str) -> Recorder:
    """A `Recorder` writing through the ledger in one transaction of its own."""

    async def record(letter: DeadLetter) -> None:
        async with transaction(sessions) as session:
            ledger = Ledger(session, service=service)
            ledger.audit(
                AuditAction.CONSUMER_DEAD_LETTER,
                task_id=letter.task_id,
                subject_ids={"subject": letter.subject, "dead_letter_id": letter.message_id},
                payload={
                    "subject": letter.subject,
                    "reason": letter.reason,
                    "sha256": letter.sha256,
                    "size": letter.size,
                    "delivered": letter.deliveries,
                },
            )
            why = f"dead-lettered from {letter.subject}: {letter.reason}"
            if letter.task_id is not None:
                await ledger.tasks.fail(letter.task_id, why)
            if letter.report_id is not None:  # a review or verification whose every delivery failed
                await ledger.reports.fail(letter.report_id, why)

    return record
