"""The commands people type against a running stack: ask, verify, review, sources, rerun, watch,
claims, findings, export. Each talks to the gateway through `research_client` (URL: `--url`,
`RESEARCH_URL` or the config file; key: `RESEARCH_API_KEY`, the config file or the local admin
key of `research-engine up`) and prints JSON with `--json`.

    research-engine ask "Does vitamin D prevent fractures?" --wait
    research-engine watch <task id | run id>
    research-engine claims list --status active
    research-engine export <report id> --format bib -o refs.bib
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console

from research_client import ApiError, ResearchClient, Task
from research_engine import render

Url = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="Gateway URL (default RESEARCH_URL, the config file, or http://127.0.0.1:8080).",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Where `research-engine up` keeps the local key.")
]

console = Console()
claims_app = typer.Typer(help="Browse the ledger's claims.", no_args_is_help=True)


@contextmanager
def gateway(url: str | None, data_dir: Path | None = None) -> Iterator[ResearchClient]:
    """A client of the gateway for one command; an error the gateway answers ends the command
    with its message (`failing`: exit 2, or 3 for a fault of the server)."""
    with ResearchClient(url, data_dir=data_dir) as rc:
        try:
            yield rc
        except ApiError as exc:
            raise failing(exc) from None


def emit(value: Any) -> None:
    """JSON on stdout: models dumped as their API JSON, lists of them as arrays."""

    def plain(item: Any) -> Any:
        if isinstance(item, BaseModel):
            return item.model_dump(mode="json")
        if isinstance(item, list):
            return [plain(i) for i in item]
        return item

    typer.echo(json.dumps(plain(value), indent=2, ensure_ascii=False, default=str))


def failing(exc: ApiError) -> typer.Exit:
    console.print(f"[red]error:[/red] {exc}", highlight=False)
    return typer.Exit(2 if exc.status < 500 else 3)


def ask(
    question: Annotated[str, typer.Argument(help="The research question.")],
    tier: Annotated[str, typer.Option(help="emergency, priority or batched.")] = "priority",
    entity: Annotated[
        str | None, typer.Option(help="The ledger entity the claim is about.")
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for the claim and its verdict.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait.")] = 300.0,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Submit a research question; with --wait, print the decided claim."""
    with gateway(url, data_dir) as rc:
        accepted = rc.submit_task(question, entity=entity, tier=tier)
        if not wait:
            emit(accepted) if as_json else console.print(
                f"task {accepted.task_id} {accepted.status} — "
                f"`research-engine watch {accepted.task_id}`"
            )
            return
        task = render.wait_task(rc, accepted.task_id, timeout, quiet=as_json)
    emit(task) if as_json else render.task(console, task)


def _mode(
    kind: str,
    text: str,
    fields: dict[str, Any],
    url: str | None,
    data_dir: Path | None,
    watch: bool,
    as_json: bool,
) -> None:
    with gateway(url, data_dir) as rc:
        requests: dict[str, Callable[..., Any]] = {
            "review": rc.request_review,
            "verify": rc.request_verification,
            "sources": rc.request_source_list,
        }
        requested = requests[kind]
        accepted = requested(text, **{k: v for k, v in fields.items() if v not in (None, [], "")})
        if as_json and not watch:
            emit(accepted)
            return
        if not as_json:
            console.print(f"{kind}: id {accepted.id}, run {accepted.run_id}")
        if watch:
            events = render.watch_run(console, rc, accepted.run_id, quiet=as_json)
            if as_json:
                emit({"accepted": accepted.model_dump(mode="json"), "events": events})


Watch = Annotated[
    bool, typer.Option("--watch/--no-watch", help="Follow the run's live trace until it is done.")
]


def verify(
    claim: Annotated[str, typer.Argument(help="The statement to verify.")],
    watch: Watch = True,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Verify a claim against the literature (a verification report)."""
    _mode("verify", claim, {}, url, data_dir, watch, as_json)


def review(
    topic: Annotated[str, typer.Argument(help="The topic of the literature review.")],
    sources: Annotated[
        list[str] | None, typer.Option("--source", help="Limit to these sources (repeatable).")
    ] = None,
    watch: Watch = True,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Write a peer-reviewed literature review of a topic."""
    _mode("review", topic, {"sources": sources or None}, url, data_dir, watch, as_json)


def sources(
    prompt: Annotated[str, typer.Argument(help="The research question or topic.")],
    keyword: Annotated[
        list[str] | None, typer.Option("--keyword", help="A keyword (repeatable).")
    ] = None,
    source_type: Annotated[str | None, typer.Option(help="academic, news, web, …")] = None,
    num_references: Annotated[int | None, typer.Option(help="Target number of references.")] = None,
    detail_level: Annotated[
        str | None,
        typer.Option(help="citation_only, citation_summary, extended_extract, facts_list."),
    ] = None,
    language: Annotated[str | None, typer.Option(help="BCP 47 language tag, e.g. en.")] = None,
    date_from: Annotated[
        str | None, typer.Option(help="Only sources published on or after (YYYY-MM-DD).")
    ] = None,
    date_to: Annotated[
        str | None, typer.Option(help="Only sources published on or before (YYYY-MM-DD).")
    ] = None,
    update_frequency: Annotated[
        str | None, typer.Option(help="Re-run on a schedule, ISO 8601 duration (P1D).")
    ] = None,
    watch: Watch = True,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Build a typed source list for a prompt (optionally on a schedule)."""
    fields = {
        "keywords": keyword,
        "source_type": source_type,
        "num_references": num_references,
        "detail_level": detail_level,
        "language": language,
        "date_from": date_from,
        "date_to": date_to,
        "update_frequency": update_frequency,
    }
    _mode("sources", prompt, fields, url, data_dir, watch, as_json)


def rerun(
    report_id: Annotated[str, typer.Argument(help="A review's or source list's id.")],
    watch: Watch = True,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Run a review or a source list again with its stored request: a new version and its diff."""
    with gateway(url, data_dir) as rc:
        kind = rc.report(report_id)["kind"]
        again = {"review": rc.refresh_review, "source_list": rc.rerun_source_list}.get(kind)
        if again is None:
            raise typer.BadParameter(
                f"a {kind} is not re-run by hand (a verification requested with `watch: true` "
                "is re-run by the replicator on its schedule)",
                param_hint="REPORT_ID",
            )
        accepted = again(report_id)
        if not as_json:
            console.print(f"{kind} {report_id}: run {accepted.run_id}")
        events = render.watch_run(console, rc, accepted.run_id, quiet=as_json) if watch else None
    if as_json:
        emit(
            {"accepted": accepted.model_dump(mode="json"), "events": events} if watch else accepted
        )


def watch(
    run_or_task_id: Annotated[
        str, typer.Argument(help="A task id (from `ask`) or a run id (from a mode).")
    ],
    timeout: Annotated[float, typer.Option(help="Seconds to wait for a task.")] = 300.0,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """The live trace of a run (SSE, resumed on reconnect) or a task's progress, until it ends."""
    with gateway(url, data_dir) as rc:
        task: Task | None = None
        try:
            task = rc.task(uuid.UUID(run_or_task_id))
        except (ValueError, ApiError) as exc:
            if isinstance(exc, ApiError) and exc.status != 404:
                raise
        if task is not None:
            task = render.wait_task(rc, task.task_id, timeout, quiet=as_json)
            emit(task) if as_json else render.task(console, task)
            return
        events = render.watch_run(console, rc, run_or_task_id, quiet=as_json)
    if as_json:
        emit(events)


@claims_app.command("list")
def claims_list(
    status: Annotated[
        str | None, typer.Option(help="pending, active, superseded, rejected, critic_quarantine.")
    ] = None,
    entity: Annotated[str | None, typer.Option(help="Only claims about this entity.")] = None,
    limit: Annotated[int, typer.Option(help="How many (newest first).")] = 20,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Claims, newest first."""
    with gateway(url, data_dir) as rc:
        found = rc.claims(status=status, entity=entity, limit=limit)
    emit(found) if as_json else render.claims(console, found)


@claims_app.command("show")
def claims_show(
    claim_id: Annotated[str, typer.Argument(help="The claim's id.")],
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """One claim with its supports and verdict."""
    with gateway(url, data_dir) as rc:
        found = rc.claim(claim_id)
    emit(found) if as_json else render.claim(console, found)


def findings(
    agent: Annotated[str | None, typer.Option(help="correlator, replicator or librarian.")] = None,
    kind: Annotated[
        str | None, typer.Option(help="e.g. eroded, broken_provenance, co_occurrence.")
    ] = None,
    unresolved: Annotated[
        bool, typer.Option("--unresolved", help="Only findings not resolved yet.")
    ] = False,
    limit: Annotated[int, typer.Option(help="How many (newest first).")] = 20,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Findings of the periodic agents (expired ones are never shown)."""
    with gateway(url, data_dir) as rc:
        found = rc.findings(agent=agent, kind=kind, unresolved=unresolved, limit=limit)
    emit(found) if as_json else render.findings(console, found)


def export(
    report_id: Annotated[
        str, typer.Argument(help="The report's id (a review, verification or source list).")
    ],
    format: Annotated[
        str, typer.Option("--format", "-f", help="md, pdf, bib, ris or csljson.")
    ] = "md",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (default: stdout; PDF needs -o)."),
    ] = None,
    url: Url = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Export a report as Markdown or PDF, or its references as BibTeX, RIS or CSL-JSON."""
    with gateway(url, data_dir) as rc:
        try:
            content = rc.export(report_id, format)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--format") from None
    if output is not None:
        output.write_bytes(content)
        if as_json:
            emit(
                {
                    "report_id": report_id,
                    "format": format,
                    "path": str(output),
                    "bytes": len(content),
                }
            )
        else:
            console.print(f"wrote {output} ({len(content)} bytes)")
        return
    if format.lower() == "pdf":
        raise typer.BadParameter("a PDF goes to a file: add -o report.pdf", param_hint="--output")
    text = content.decode()
    emit({"report_id": report_id, "format": format, "content": text}) if as_json else typer.echo(
        text, nl=False
    )


def logs(
    service: Annotated[
        str,
        typer.Argument(
            help="gateway, connector, researcher, critic, correlator, replicator, librarian, …"
        ),
    ],
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new lines (Ctrl-C stops).")
    ] = False,
    lines: Annotated[
        int, typer.Option("--lines", "-n", help="How many of the last lines to start with.")
    ] = 50,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """A service's log from the embedded stack (`<data dir>/logs/<service>.log`)."""
    from research_platform.settings import get_settings

    folder = (data_dir or get_settings().data_dir).resolve() / "logs"
    path = folder / f"{service}.log"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.log")) if folder.is_dir() else []
        console.print(
            f"[red]no log for {service!r}[/red] in {folder}"
            + (
                f" (there are: {', '.join(known)})"
                if known
                else " (is the stack started with `research-engine up` in this data folder?)"
            ),
            highlight=False,
        )
        raise typer.Exit(2)
    for line in render.tail(path, lines, follow):
        if as_json:
            try:
                typer.echo(json.dumps(json.loads(line)))
            except ValueError:
                typer.echo(json.dumps({"service": service, "event": line}))
        else:
            typer.echo(line)


def register(app: typer.Typer) -> None:
    """Add these commands to the `research-engine` app."""
    for command in (ask, verify, review, sources, rerun, watch, findings, export, logs):
        app.command()(command)
    app.add_typer(claims_app, name="claims")
