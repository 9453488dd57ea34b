"""The run wiring every mode shares: a recorder resumed on the run's event stream, the recorded
search port, and what a failed run leaves behind.

`mode_run` wraps one run: the events end with `done` (`completed`, or `error` + `done(failed)`);
a `TransientError` goes back to the bus (redelivery) and a `PrepareError` to the dead letters,
unless the mode settles every run itself (`settle_all=True`, the scout: a scheduled list tries
again at its next time); anything else fails the report through the mode's `fail`
callback with the reason, and `run.failed` tells the caller to stop there. The run is also an LLM
run (`research_llm.usage`): every model request made inside counts in `run.llm`, the chain's
per-run budget (`LLM__RUN_BUDGET_*`) bounds it, and a run that asked a model (or fell back from
one) ends its trace with an `llm.usage` step — calls, tokens in / out, cost, seconds, the budget
and every question the offline engine answered instead, with the reason.

`WatchedPort` sits between a mode's agents and the `ConnectorClient` (or any port with the same
`call` / `outside`): every outside search is noted in the run's `SourceLog`, and a source seen down
for the first time is told as a `reasoning` event; a corpus tool that answered counts the corpus as
a source that answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from nats.js import JetStreamContext
from pydantic import BaseModel

from research_contracts import EvidenceFound
from research_ledger import AuditAction, Ledger, ReportStatus, UnitOfWork
from research_ledger.reports import ReportRow
from research_llm import usage
from research_modes.connector import SourceLog
from research_platform.errors import PrepareError, TransientError
from research_platform.logging import get_logger
from research_runs import RunRecorder

log = get_logger(__name__)


class ConnectorPort(Protocol):
    async def call(self, tool: str, request: BaseModel) -> Any:
        """A corpus tool's `result` JSON; raises `ToolsUnavailable`."""

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound:
        """Evidence from outside connectors (fail soft: sources that gave nothing are `degraded`)."""


async def tell(
    recorder: RunRecorder | None, sources: SourceLog, asked: list[str], found: EvidenceFound
) -> None:
    """Note one search in the run's log; a source newly down becomes a run event."""
    fresh = sources.note(asked, found)
    if fresh and recorder is not None:
        await recorder.reasoning(
            "Sources down (nothing from them in this run's evidence): "
            + "; ".join(f"{s}: {why}" for s, why in sorted(fresh.items()))
        )


@dataclass
class WatchedPort:
    """A port whose searches land in the run's `SourceLog` (and, when new, in its run events)."""

    port: ConnectorPort
    recorder: RunRecorder | None
    sources: SourceLog = field(default_factory=SourceLog)

    async def call(self, tool: str, request: BaseModel) -> Any:
        result = await self.port.call(tool, request)
        self.sources.answered_by("corpus")
        return result

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound:
        found = await self.port.outside(query, sources, limit)
        await tell(self.recorder, self.sources, sources, found)
        return found


def audit_sources(
    ledger: UnitOfWork, sources: SourceLog, report_id: Any, *, kind: str, run_id: str
) -> None:
    """The `research.report.sources_down` audit row of a run that had sources down (none otherwise)."""
    if sources.down:
        ledger.audit(
            AuditAction.REPORT_SOURCES_DOWN,
            subject_ids={"report_id": report_id},
            payload={
                "kind": kind,
                "run_id": run_id,
                "sources": dict(sources.down),
                "all_down": sources.all_down,
            },
        )


def runs_now(row: ReportRow, run_id: str) -> bool:
    """Whether `run_id` is the report's current run, still `running`: a command for an older run,
    or redelivered after its run ended, is logged and left alone."""
    if row.run_id == run_id and row.status == ReportStatus.running:
        return True
    log.info(
        "command is not for the report's current run", status=row.status, current_run=row.run_id
    )
    return False


@dataclass
class ModeRun:
    """One run of a mode: its recorder, the sources it asked, and why it failed (None while it did not)."""

    recorder: RunRecorder
    report_id: Any
    kind: str
    sources: SourceLog = field(default_factory=SourceLog)
    failed: str | None = None
    llm: usage.Run = field(
        default_factory=usage.Run
    )  # the run's model requests, budget and fallbacks

    def port(self, port: ConnectorPort) -> WatchedPort:
        """`port` with this run's searches noted in `sources` (and told in its events)."""
        return WatchedPort(port, self.recorder, self.sources)

    def audit_sources(self, ledger: UnitOfWork) -> None:
        """The run's `research.report.sources_down` row, in the caller's transaction (none when all answered)."""
        audit_sources(
            ledger, self.sources, self.report_id, kind=self.kind, run_id=self.recorder.run_id
        )


@asynccontextmanager
async def mode_run(
    js: JetStreamContext,
    ledger: Ledger,
    *,
    service: str,
    kind: str,
    report_id: Any,
    run_id: str,
    agent: str | None = None,
    settle_all: bool = False,
    also_on_failure: Callable[[UnitOfWork, str], Awaitable[None]] | None = None,
    publisher: Any = None,
) -> AsyncIterator[ModeRun]:
    """One run of a mode (see the module docstring): `async with mode_run(...) as run: ...; if run.failed: return`.

    `publisher` is the service's declared run-event publisher (`ServiceContext.run_events`): the
    events go through it, so the service's AsyncAPI lists them (None: `js` directly, the tests)."""
    recorder = await RunRecorder.resume(
        js,
        run_id,
        publisher=publisher,
        report_id=report_id,
        **({"agent": agent} if agent else {}),
    )
    run = ModeRun(recorder, report_id, kind)

    async def failed(exc: BaseException) -> None:
        run.failed = f"{type(exc).__name__}: {exc}"[:2000]
        log.exception("run failed", run_id=run_id)
        async with ledger.unit_of_work(service=service) as uow:
            await uow.reports.fail(report_id, run.failed)
            run.audit_sources(uow)
            if also_on_failure is not None:
                await also_on_failure(uow, run.failed)

    try:
        async with recorder.running():
            with usage.within(run.llm):
                try:
                    yield run
                except Exception:
                    await record_llm_usage(recorder, run.llm)
                    raise
                await record_llm_usage(recorder, run.llm)
    except TransientError as exc:
        if not settle_all:
            raise
        await failed(exc)
    except Exception as exc:
        await failed(exc)
        if isinstance(exc, PrepareError) and not settle_all:
            raise


LLM_USAGE_TOOL = "llm.usage"


async def record_llm_usage(recorder: RunRecorder, llm: usage.Run) -> None:
    """The run's model usage as its `llm.usage` trace step; nothing when no model was asked and
    nothing fell back (an offline run)."""
    if not llm.usage.calls and not llm.fallbacks:
        return
    async with recorder.tool(LLM_USAGE_TOOL, {"budget": llm.budget.as_dict()}) as call:
        call.result = llm.summary()
