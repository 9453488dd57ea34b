"""The scheduler base of every periodic agent: tick loop, run-once, run-lock, pause, cancel, status.

    scheduler = Scheduler("librarian", engine, work, ScheduleSettings(interval_s=300))
    scheduler.start()        # in the service lifespan; `await scheduler.stop()` on the way out

`work(ctx)` does one run and returns its counts; it calls `await ctx.checkpoint()` between
units of work — that is where a cancel takes effect (`RunCancelled`) and where a pause holds
the run until it is resumed. A run needs the agent's run-lock (a Postgres advisory lock), so
across all replicas at most one run is in flight; a run-once meanwhile raises `RunInFlight`.
Ticks of several replicas do not multiply: a tick that finds a run started less than
`interval_s` ago skips. Every run is a row in `agent_runs`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncEngine

from research_agents.errors import AgentPaused, RunCancelled, RunInFlight
from research_agents.runlock import RunLock, lock_is_held
from research_agents.runs import RunBook, Switches
from research_ledger.findings import Findings
from research_platform.db import session_factory
from research_platform.logging import get_logger
from research_platform.shutdown import cancel_within

log = get_logger(__name__)

FINDINGS_WINDOW = timedelta(hours=24)
STOP_TICKS_S = 10.0  # the tick loop: cancelled between or inside a run_once
STOP_RUN_S = 30.0  # the run in flight: cancelled, it still writes its end row


class ScheduleSettings(BaseModel):
    """How often an agent ticks and how quickly it notices operator switches."""

    interval_s: float = Field(default=300.0, gt=0, description="Seconds between ticks.")
    first_tick_s: float = Field(
        default=5.0, ge=0, description="Delay before the first tick after start."
    )
    enabled: bool = Field(default=True, description="False = no ticks; run-once still works.")
    control_poll_s: float = Field(
        default=0.5, gt=0, description="How often a run re-reads pause/cancel."
    )


@dataclass
class RunContext:
    """Handed to `work`: the run's identity, its counters, and the safe point."""

    run_id: uuid.UUID
    agent: str
    trigger: str
    scheduler: Scheduler
    counts: dict[str, Any] = field(default_factory=dict)
    _checked_at: float = 0.0

    def bump(self, name: str, by: int = 1) -> None:
        self.counts[name] = int(self.counts.get(name, 0)) + by

    async def checkpoint(self) -> None:
        """A safe point: raise `RunCancelled` if cancelled, wait here while the agent is paused."""
        while True:
            if self.scheduler._cancel_local.is_set():
                raise RunCancelled(f"run {self.run_id} cancelled")
            now = time.monotonic()
            if now - self._checked_at < self.scheduler.settings.control_poll_s:
                return
            self._checked_at = now
            switches = await self.scheduler.switches()
            if switches.cancel_run_id == self.run_id:
                raise RunCancelled(f"run {self.run_id} cancelled")
            if not switches.paused:
                return
            self.scheduler._suspended = True
            try:
                await asyncio.sleep(self.scheduler.settings.control_poll_s)
            finally:
                self.scheduler._suspended = False
            self._checked_at = 0.0


Work = Callable[[RunContext], Awaitable[dict[str, Any] | None]]


class Scheduler:
    """Runs `work` on a tick and on demand, one run at a time across every replica."""

    def __init__(
        self, agent: str, engine: AsyncEngine, work: Work, settings: ScheduleSettings
    ) -> None:
        self.agent = agent
        self.engine = engine
        self.sessions = session_factory(engine)
        self.work = work
        self.settings = settings
        self.next_tick_at: datetime | None = None
        self._loop: asyncio.Task[None] | None = None
        self._current: asyncio.Task[None] | None = None
        self._current_id: uuid.UUID | None = None
        self._cancel_local = asyncio.Event()
        self._suspended = False

    @property
    def suspended(self) -> bool:
        """Whether this replica's run is held at a safe point by a pause right now."""
        return self._suspended

    # --- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        """Start the tick loop (no-op when ticks are disabled)."""
        if self.settings.enabled and self._loop is None:
            self._loop = asyncio.create_task(self._tick_loop(), name=f"{self.agent}-ticks")

    async def stop(self) -> None:
        """Stop ticking, then interrupt the run in flight (its row says `interrupted`).

        Each waits a bounded time (`shutdown.cancel_within`): a tick can swallow its cancellation
        (a reply arriving as it lands), and a stop must never wait for a loop that runs on.
        """
        for task, what, bound_s in (
            (self._loop, "ticks", STOP_TICKS_S),
            (self._current, "run", STOP_RUN_S),
        ):
            if task is not None:
                with contextlib.suppress(Exception):  # the run's own failure is recorded in its row
                    await cancel_within(task, what=f"{self.agent} {what}", timeout_s=bound_s)
        self._loop = self._current = None

    async def _tick_loop(self) -> None:
        delay = self.settings.first_tick_s
        while True:
            self.next_tick_at = datetime.now(UTC) + timedelta(seconds=delay)
            await asyncio.sleep(delay)
            delay = self.settings.interval_s
            try:
                await self.run_once(trigger="tick")
            except (RunInFlight, AgentPaused):
                pass
            except Exception as exc:  # noqa: BLE001 - the loop must survive a database hiccup
                log.warning("tick failed to start a run", agent=self.agent, error=repr(exc))

    # --- runs ---------------------------------------------------------------------------
    async def run_once(self, *, trigger: str = "manual") -> uuid.UUID | None:
        """Start a run in the background and return its id.

        Raises `AgentPaused` while paused and `RunInFlight` while any replica runs; a tick
        returns None when a run started less than `interval_s` ago (another replica ticked).
        """
        if (await self.switches()).paused:
            raise AgentPaused(f"{self.agent} is paused; resume it first")
        if self._current is not None and not self._current.done():
            raise RunInFlight(self.agent, self._current_id)
        lock = RunLock(self.engine, self.agent)
        if not await lock.acquire():
            raise RunInFlight(self.agent)
        try:
            async with self.sessions() as session, session.begin():
                book = RunBook(session, self.agent)
                if trigger == "tick":
                    age = await book.seconds_since_last_start()
                    if age is not None and age < self.settings.interval_s * 0.9:
                        await lock.release()
                        return None
                run_id = await book.begin_run(trigger)
        except BaseException:
            await lock.release()
            raise
        self._cancel_local.clear()
        self._current_id = run_id
        self._current = asyncio.create_task(
            self._execute(run_id, trigger, lock), name=f"{self.agent}-run"
        )
        return run_id

    async def wait_current(self, timeout: float | None = None) -> None:
        """Wait for this replica's run in flight to finish (if any)."""
        task = self._current
        if task is not None:
            await asyncio.wait_for(asyncio.shield(task), timeout)

    async def _execute(self, run_id: uuid.UUID, trigger: str, lock: RunLock) -> None:
        ctx = RunContext(run_id, self.agent, trigger, self)
        outcome, error = "completed", None
        started = time.monotonic()
        try:
            result = await self.work(ctx)
            if result:
                ctx.counts.update(result)
        except RunCancelled:
            outcome = "cancelled"
        except asyncio.CancelledError:
            outcome, error = "interrupted", "the process stopped during the run"
            raise
        except Exception as exc:
            outcome, error = "failed", repr(exc)
            log.exception("run failed", agent=self.agent, run_id=str(run_id))
        finally:
            ctx.counts["duration_s"] = round(time.monotonic() - started, 3)
            try:
                async with self.sessions() as session, session.begin():
                    book = RunBook(session, self.agent)
                    await book.finish_run(run_id, outcome, ctx.counts, error)
                    await book.clear_cancel(run_id)
            except Exception as exc:  # noqa: BLE001 - the lock is released whatever failed
                log.error("could not record the end of a run", agent=self.agent, error=repr(exc))
            finally:
                await lock.release()
                self._current_id = None
            log.info(
                "run finished",
                agent=self.agent,
                run_id=str(run_id),
                outcome=outcome,
                counts=ctx.counts,
            )

    # --- operator verbs -----------------------------------------------------------------
    async def switches(self) -> Switches:
        async with self.sessions() as session:
            return await RunBook(session, self.agent).switches()

    async def pause(self, actor: str | None = None) -> None:
        async with self.sessions() as session, session.begin():
            await RunBook(session, self.agent).set_paused(True, actor)

    async def resume(self, actor: str | None = None) -> None:
        async with self.sessions() as session, session.begin():
            await RunBook(session, self.agent).set_paused(False, actor)

    async def cancel_current(self, actor: str | None = None) -> uuid.UUID | None:
        """Ask the run in flight (any replica) to stop at its next safe point; its id, or None."""
        if self._current_id is not None and self._current is not None and not self._current.done():
            self._cancel_local.set()
        async with self.sessions() as session, session.begin():
            book = RunBook(session, self.agent)
            current = await book.current()
            if current is None or not await lock_is_held(session, self.agent):
                return self._current_id if self._cancel_local.is_set() else None
            await book.request_cancel(current.id, actor)
            return current.id

    async def status(self) -> dict[str, Any]:
        """State (running / paused / idle), the run in flight, the last run, next tick, findings in 24 h."""
        async with self.sessions() as session:
            book = RunBook(session, self.agent)
            switches = await book.switches()
            running = await lock_is_held(session, self.agent)
            current = await book.current() if running else None
            last = await book.last_finished()
            findings = await Findings(session, self.agent).count_since(FINDINGS_WINDOW)
        state = "paused" if switches.paused else ("running" if running else "idle")
        return {
            "agent": self.agent,
            "state": state,
            "suspended_run": bool(switches.paused and running),
            "current_run": current.as_dict() if current else None,
            "last_run": last.as_dict() if last else None,
            "next_tick": self.next_tick_at.isoformat()
            if (self.next_tick_at and self._loop)
            else None,
            "interval_s": self.settings.interval_s,
            "findings_24h": findings,
        }
