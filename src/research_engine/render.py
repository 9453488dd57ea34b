"""How the CLI shows things to a person in a terminal (rich): claims, findings, a task's progress
and a run's live trace. Nothing here is printed with `--json`."""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from research_client import Claim, Finding, ResearchClient, Task
from research_contracts.runs import RunEventType

TASK_STEPS = ("queued", "running", "claimed", "decided")


def claim(console: Console, found: Claim) -> None:
    console.print(f"[bold]{escape(found.statement)}[/bold]")
    console.print(
        f"  {found.status.upper()} · confidence {found.confidence:.2f} · {found.model} · "
        f"entity {escape(found.entity)} · id {found.claim_id}",
        highlight=False,
    )
    for n, support in enumerate(found.supports, 1):
        console.print(
            f"  [{n}] {escape(support.source_id)} — {escape(support.title or '')}", highlight=False
        )
        console.print(f"      “{escape(support.quote)}”", highlight=False)
    if found.verdict:
        v = found.verdict
        console.print(
            f"  critic: {v.verdict} (score {v.score:.2f}, {v.model}) — {escape(v.reasoning)}",
            highlight=False,
        )


def task(console: Console, found: Task) -> None:
    console.print(
        f"Q: {escape(found.question)}  [dim]({found.tier}, task {found.task_id})[/dim]",
        highlight=False,
    )
    if found.claim is not None:
        claim(console, found.claim)
    else:
        console.print(
            f"  task {found.status}" + (f": {escape(found.error)}" if found.error else ""),
            highlight=False,
        )


def claims(console: Console, found: list[Claim]) -> None:
    if not found:
        console.print("no claims")
        return
    table = Table("id", "status", "conf.", "entity", "statement", "verdict", show_lines=False)
    for c in found:
        table.add_row(
            str(c.claim_id)[:8],
            c.status,
            f"{c.confidence:.2f}",
            escape(c.entity)[:24],
            escape(c.statement)[:80],
            c.verdict.verdict if c.verdict else "",
        )
    console.print(table)


def findings(console: Console, found: list[Finding]) -> None:
    if not found:
        console.print("no findings")
        return
    table = Table("id", "agent", "kind", "claims", "created", "resolved")
    for f in found:
        table.add_row(
            str(f.finding_id)[:8],
            f.agent,
            f.kind,
            str(len(f.claim_ids)),
            f"{f.created_at:%Y-%m-%d %H:%M}",
            f"{f.resolved_at:%Y-%m-%d}" if f.resolved_at else "",
        )
    console.print(table)


def _step(found: Task) -> int:
    if found.claim is not None and found.claim.decided:
        return 4
    if found.claim is not None:
        return 3
    return 2 if found.status not in ("queued", "submitted") else 1


def wait_task(
    rc: ResearchClient, task_id: uuid.UUID, timeout: float, *, quiet: bool = False
) -> Task:
    """Poll the task until its claim is decided (or it failed), with a progress bar unless quiet."""
    deadline = time.monotonic() + timeout
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        disable=quiet,
        transient=True,
        console=Console(stderr=True),
    )
    with progress:
        bar = progress.add_task("queued", total=len(TASK_STEPS))
        while True:
            found = rc.task(task_id)
            label = found.claim.status if found.claim is not None else found.status
            progress.update(bar, completed=_step(found), description=f"task {label}")
            if found.finished:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"task {task_id} is still {label} after {timeout:.0f}s")
            time.sleep(0.5)


def _describe(event: Any) -> str:
    kind = event.type
    fields = event.model_dump(
        exclude={"run_id", "type", "agent", "iteration", "seq", "at", "emitted_at"}
    )
    short = ", ".join(
        f"{k}={str(v)[:60]}" for k, v in fields.items() if v not in (None, "", [], {})
    )
    return f"[cyan]{event.agent}[/cyan] {kind} {escape(short)}"


def watch_run(
    console: Console, rc: ResearchClient, run_id: str, *, quiet: bool = False
) -> list[dict[str, Any]]:
    """Print each event of the run as it arrives, with a live progress line; returns them as JSON."""
    seen: list[dict[str, Any]] = []
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=quiet,
    )
    bar = progress.add_task(f"run {run_id}", total=None)
    with progress:  # the progress line stays under the events printed above it
        for item in rc.run_events(run_id):
            event = item.event
            seen.append({"id": item.id, **event.model_dump(mode="json")})
            if not quiet:
                console.print(_describe(event), highlight=False)
            progress.update(
                bar, description=f"run {run_id}: {event.agent} {event.type} ({len(seen)} events)"
            )
            if event.type == RunEventType.done:
                break
    if not quiet:
        console.print(f"run {run_id} done ({len(seen)} events)")
    return seen


def tail(path: Path, lines: int, follow: bool, *, poll_s: float = 0.3) -> Iterator[str]:
    """The last `lines` lines of `path`, then (with `follow`) each new line as it is written.

    A restarted service appends to the same file; a file that shrank (rotated or truncated) is
    read again from its start.
    """
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        yield from (line.rstrip("\n") for line in deque(handle, maxlen=max(0, lines)))
        if not follow:
            return
        partial = ""
        while True:
            chunk = handle.readline()
            if chunk:
                partial += chunk
                if partial.endswith("\n"):
                    yield partial.rstrip("\n")
                    partial = ""
                continue
            if path.stat().st_size < handle.tell():
                handle.seek(0)
            time.sleep(poll_s)
