"""The ledger's side of a dead-lettered message: one audit row, and the request failed with the reason.

`research_platform.delivery.Delivery` parks the bytes on the dead-letter stream and then calls
the recorder built here (the platform cannot import the ledger: the ledger stands on it). The
audit row carries subject, reason, digest and size, never the body: the body may hold PHI, or
bytes Postgres rejects (`\\u0000` in jsonb), and it already waits on the stream for an operator.
No request dies silently: a task whose message was dead-lettered is `failed` with that reason,
and so is the report of a review, verification or source-list command (its `review_id` /
`verification_id` / `source_list_id`), with a source list's open runs — each would otherwise read
`running` for ever when, say, the corpus tools stayed down through every delivery. `GET` shows the
reason (`error`), and so do the console, the CLI and the MCP tools, which read it there; `tell_run`,
when given (the modes give it), ends the report's run event stream with `error` + `done(failed)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_ledger import AuditAction, UnitOfWork
from research_ledger.source_lists import SourceListBook
from research_platform.db import transaction
from research_platform.delivery import DeadLetter, Recorder

RunTeller = Callable[[str, str], Awaitable[None]]  # (run_id, reason): the run's events end failed


def recorder(
    sessions: async_sessionmaker[AsyncSession], service: str, *, tell_run: RunTeller | None = None
) -> Recorder:
    """A `Recorder` writing through the ledger in one transaction of its own."""

    async def record(letter: DeadLetter) -> None:
        why = f"dead-lettered from {letter.subject}: {letter.reason}"
        failed_run: str | None = None
        async with transaction(sessions) as session:
            ledger = UnitOfWork(session, service=service)
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
            if letter.task_id is not None:
                await ledger.tasks.fail(letter.task_id, why)
            if letter.report_id is not None:
                failed = await ledger.reports.fail(letter.report_id, why)
                report = await ledger.reports.get(letter.report_id)
                if report is not None and failed:
                    failed_run = report.run_id
                if (
                    report is not None and report.kind == "source_list"
                ):  # a re-run of a completed list too
                    await SourceListBook(session, service=service).fail_open_runs(
                        letter.report_id, why
                    )
        if failed_run is not None and tell_run is not None:
            await tell_run(failed_run, why)

    return record
