"""Source lists (seed 002) over HTTP: submit, read the latest snapshot, per-source actions,
exports, run history, schedule verbs and the workspace's admin limits.

    POST  /source-lists                          researcher  → 202 {source_list_id, run_id, request}
    GET   /source-lists?save_to_kind=&save_to_id=  reader    the lists (filter by attachment)
    GET   /source-lists/{id}                     reader      the latest `SourceList` (removed sources left out,
                                                             each source with its `preferred` flag)
    POST  /source-lists/{id}/sources/{source_id} researcher  {"action": remove | prefer | unprefer} (owner or admin)
    GET   /source-lists/{id}/export?format=md|bib|ris|csljson   reader
    GET   /source-lists/{id}/runs                reader      history (completed / failed / running / scheduled),
                                                             each run's diff, the stored request
    POST  /source-lists/{id}/runs                researcher  re-run with the stored request → 202 (409 while running)
                                                             (owner or admin)
    PATCH /source-lists/{id}/schedule            admin       {"action": pause | resume | cancel | modify, ...}
    GET|PUT /source-lists/limits/{workspace}     admin       the admin limits

Run-time values are clamped to the workspace's limits silently (`research_ledger.source_limits`);
the 202 answer shows the clamped request. A schedule shorter than the minimum update interval, or
beyond the workspace's maximum of scheduled lists, is a 409 naming that limit (the request is
well-formed; the workspace's policy refuses it). The run id is the server's: a body naming one
(or a trigger, an origin) is refused with 422. Only the key that asked for a list, or an admin,
changes it (`ownership.py`; 403 with the reason otherwise). The ledger's privacy check runs first
(a refusal is a 422 and nothing is published); then the gateway opens the report, with its
owner, and stages the request for `research.sourcelist.requested` (`Nats-Msg-Id` per run) in the
ledger's outbox in the same transaction; its relay publishes it after the commit
(`research_ledger.outbox`), so the scout always finds the report open.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from research_contracts import subjects
from research_contracts.sourcelists import (
    UPDATE_FREQUENCY_PATTERN,
    ListedSource,
    RequestSourceList,
    SourceList,
    SourceListRequest,
    duration_seconds,
)
from research_gateway.accounts import limits_of, require_workspace
from research_gateway.auth import AUTH_RESPONSES, Admin, Reader, Researcher
from research_gateway.deps import API, SERVICE, Current, LedgerDoor, or_404
from research_gateway.ownership import OWNED_RESPONSES, owner_of, require_owner
from research_gateway.quotas import QUOTA_RESPONSES, KeyQuotas
from research_gateway.reports import EXPORTED
from research_gateway.storable import Slug
from research_ledger import AuditAction, UnitOfWork
from research_ledger.deidentified import check_report
from research_ledger.source_limits import WorkspaceLimits, clamp, schedule_refusal
from research_platform.logging import get_logger
from research_platform.settings import GatewayLimitsSettings
from research_reports import Report, export_report

log = get_logger(__name__)
router = APIRouter(prefix=API, tags=["source lists"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "no such source list (or source)"}
}
NO_SNAPSHOT: dict[int | str, dict[str, Any]] = {
    409: {"description": "no snapshot yet: the list is being built (or its run failed)"}
}
REFUSED = "a schedule beyond the workspace's limits (min_update_interval_s, max_scheduled_lists), named in the detail"
EXPORTS = {"md": "markdown", "bib": "bibtex", "ris": "ris", "csljson": "csl-json"}


class SourceListAccepted(BaseModel):
    source_list_id: uuid.UUID
    run_id: str
    request: dict[str, Any] = Field(
        description="The request as it will run: clamped to the workspace's limits."
    )


class ListedSourceView(ListedSource):
    preferred: bool = Field(
        default=False, description="Flagged preferred by a user: kept on re-runs."
    )


class SourceListView(SourceList):
    """The seed's `SourceList` as this API shows it: each source says whether it is flagged preferred."""

    sources: list[ListedSourceView] = Field(default_factory=list)  # type: ignore[assignment]  # narrower items (list is invariant); pydantic validates these


class SourceAction(BaseModel):
    action: Literal["remove", "prefer", "unprefer"]


class ScheduleVerb(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["pause", "resume", "cancel"]
    update_frequency: None = None


class ScheduleModify(BaseModel):
    """`modify` carries the new period (the schema says so: no "modify needs update_frequency" 422)."""

    model_config = ConfigDict(extra="forbid", regex_engine="python-re")

    action: Literal["modify"]
    update_frequency: str = Field(
        pattern=UPDATE_FREQUENCY_PATTERN, description="The new ISO 8601 duration.", examples=["P7D"]
    )


ScheduleChange = Annotated[ScheduleVerb | ScheduleModify, Field(discriminator="action")]


def _schedule_view(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "status": row.status,
        "update_frequency": row.update_frequency,
        "next_run_at": row.next_run_at.isoformat() if row.next_run_at else None,
        "last_run_at": row.last_run_at.isoformat() if row.last_run_at else None,
    }


def _send(uow: UnitOfWork, request: RequestSourceList) -> None:
    """Stage the command in the outbox of the transaction that opens or re-runs its report."""
    uow.outbox.add(
        subjects.SOURCELIST_REQUESTED,
        request,
        msg_id=f"sourcelist-{request.source_list_id}-{request.run_id}",
    )


@router.put("/source-lists/limits/{workspace}", responses=AUTH_RESPONSES)
async def set_limits(
    workspace: Slug, limits: WorkspaceLimits, ledger: LedgerDoor, caller: Admin
) -> dict[str, Any]:
    """Set a workspace's admin limits (only here: run-time requests are clamped to them)."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        previous = await uow.limits.store(workspace, limits)
        uow.audit(
            AuditAction.SOURCELIST_LIMITS_CHANGED,
            subject_ids={"key_id": caller.key_id, "workspace": workspace},
            payload={
                "workspace": workspace,
                "previous": previous,
                "limits": limits.model_dump(mode="json"),
            },
        )
    return {"workspace": workspace, **limits.model_dump(mode="json")}


@router.get("/source-lists/limits/{workspace}", responses=AUTH_RESPONSES)
async def get_limits(workspace: Slug, uow: Current, caller: Admin) -> dict[str, Any]:
    return {
        "workspace": workspace,
        **(await uow.limits.of(workspace)).model_dump(mode="json"),
    }


@router.post(
    "/source-lists",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=SourceListAccepted,
    responses={
        **AUTH_RESPONSES,
        422: {"description": "bad input"},
        403: {
            "description": "a key whose role is too low, or a researcher key naming a workspace it is "
            "not bound to"
        },
        404: {"description": "a workspace nobody declared, when workspaces must be declared"},
        409: {"description": f"this source_list_id exists, or {REFUSED}"},
        **QUOTA_RESPONSES,
    },
)
async def submit_source_list(
    body: SourceListRequest,
    ledger: LedgerDoor,
    caller: Researcher,
    quotas: KeyQuotas,
    gateway_limits: Annotated[GatewayLimitsSettings, Depends(limits_of)],
) -> SourceListAccepted:
    """Ask for a source list; it is built asynchronously (poll GET /source-lists/{id} or follow the run's events)."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        await require_workspace(uow, caller, body.workspace, gateway_limits)
        limits = await uow.limits.of(body.workspace)
        if await uow.reports.get(body.source_list_id) is not None:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                "this source_list_id exists; re-run it through its schedule",
            )
        refused = schedule_refusal(
            body.update_frequency, await uow.source_lists.scheduled_count(body.workspace), limits
        )
    if refused:
        raise HTTPException(status.HTTP_409_CONFLICT, refused)
    request = clamp(
        RequestSourceList(**body.model_dump(), trigger="request", origin="api"), limits
    )  # a run id of its own
    report: dict[str, Any] = {
        "subject": request.prompt,
        "subject_key": " ".join(request.keywords)[:200] or request.prompt[:200],
        "request": request.model_dump(mode="json", exclude={"run_id", "trigger"}),
        "save_to": request.save_to.model_dump() if request.save_to else {},
    }
    check_report(**report)  # the ledger's own check, before anything is published: one answer (422)
    async with (
        quotas.taken(
            caller, "source_list", subject_id=request.source_list_id, run_id=request.run_id
        ),
        ledger.unit_of_work(service=SERVICE) as uow,
    ):
        if not await uow.reports.open(
            request.source_list_id,
            kind="source_list",
            run_id=request.run_id,
            owner=owner_of(caller),
            **report,
        ):
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                "this source_list_id exists; re-run it through its schedule",
            )
        _send(uow, request)
    return SourceListAccepted(
        source_list_id=request.source_list_id,
        run_id=request.run_id,
        request=request.model_dump(mode="json", exclude={"trigger", "origin"}),
    )


@router.get("/source-lists", responses=AUTH_RESPONSES)
async def list_source_lists(
    uow: Current,
    caller: Reader,
    save_to_kind: str | None = None,
    save_to_id: str | None = None,
    limit: int = Query(default=50, ge=1, le=500),
) -> list[dict[str, Any]]:
    """Source lists, newest first; `save_to_kind` / `save_to_id` keep those attached to that record."""
    wanted = {k: v for k, v in {"kind": save_to_kind, "id": save_to_id}.items() if v}
    book = uow.source_lists
    rows = await book.lists(save_to=wanted or None, limit=limit)
    return [
        {
            "source_list_id": str(r.id),
            "prompt": r.request.get("prompt"),
            "status": r.status,
            "run_id": r.run_id,
            "version": r.current_version,
            "save_to": r.save_to or None,
            "schedule": _schedule_view(await book.schedule(r.id)),
        }
        for r in rows
    ]


async def _latest(uow: UnitOfWork, source_list_id: uuid.UUID) -> tuple[Any, dict[str, Any]]:
    report = or_404(
        await uow.reports.get(source_list_id, kind="source_list"),
        f"no source list {source_list_id}",
    )
    version = await uow.reports.version(source_list_id)
    if version is None:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            {
                "status": report.status,
                "error": report.error,
                "detail": "no snapshot yet: the list is being built",
            },
        )
    return report, version.content


def _visible(content: dict[str, Any], removed: set[uuid.UUID]) -> SourceList:
    source_list = SourceList.model_validate(content["source_list"])
    source_list.sources = [s for s in source_list.sources if s.source_id not in removed]
    return source_list


@router.get(
    "/source-lists/{source_list_id}",
    response_model=SourceListView,
    responses={**AUTH_RESPONSES, **NOT_FOUND, **NO_SNAPSHOT},
)
async def get_source_list(
    source_list_id: uuid.UUID, uow: Current, caller: Reader
) -> SourceListView:
    """The latest snapshot: the seed's SourceList (sources removed by a user left out), each source
    with `preferred` (flagged by a user, kept on re-runs)."""
    _, content = await _latest(uow, source_list_id)
    removed, preferred = await uow.source_lists.actions(source_list_id)
    source_list = _visible(content, removed)
    schedule = await uow.source_lists.schedule(source_list_id)
    if schedule is not None:
        source_list.next_run_at = schedule.next_run_at if schedule.status == "active" else None
    shown = source_list.model_dump(exclude={"sources"})
    sources = [
        {**s.model_dump(), "preferred": str(s.source_id) in preferred} for s in source_list.sources
    ]
    return SourceListView.model_validate({**shown, "sources": sources})


@router.post(
    "/source-lists/{source_list_id}/sources/{source_id}",
    responses={**AUTH_RESPONSES, **OWNED_RESPONSES, **NOT_FOUND, **NO_SNAPSHOT},
)
async def mark_source(
    source_list_id: uuid.UUID,
    source_id: uuid.UUID,
    body: SourceAction,
    ledger: LedgerDoor,
    caller: Researcher,
) -> dict[str, Any]:
    """Remove a source (never listed again) or flag it preferred (kept on re-runs)."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        report, content = await _latest(uow, source_list_id)
        require_owner(caller, report, "source list")
        stored = next(
            (s for s in content["source_list"]["sources"] if s["source_id"] == str(source_id)), None
        )
        if stored is None:
            raise HTTPException(
                status.HTTP_404_NOT_FOUND, f"source {source_id} is not in the latest snapshot"
            )
        action = {"remove": "removed", "prefer": "preferred", "unprefer": "unpreferred"}[
            body.action
        ]
        copy = {
            "source": ListedSource.model_validate(stored).model_dump(mode="json"),
            "provenance": content.get("provenance", {}).get(str(source_id), {}),
        }
        await uow.source_lists.mark_source(source_list_id, source_id, action, copy)
    return {"source_list_id": str(source_list_id), "source_id": str(source_id), "action": action}


@router.get(
    "/source-lists/{source_list_id}/export",
    response_class=Response,
    responses={**AUTH_RESPONSES, **EXPORTED, **NOT_FOUND, **NO_SNAPSHOT},
)
async def export_source_list(
    source_list_id: uuid.UUID,
    uow: Current,
    caller: Reader,
    format: Literal["md", "bib", "ris", "csljson"] = "md",
) -> Response:
    """The latest snapshot as Markdown, BibTeX, RIS or CSL-JSON (removed sources left out)."""
    _, content = await _latest(uow, source_list_id)
    removed, _ = await uow.source_lists.actions(source_list_id)
    report = Report.model_validate(content["report"])
    if removed:
        gone = {str(s) for s in removed}
        origin = {
            p.get("origin_id") for sid, p in content.get("provenance", {}).items() if sid in gone
        }
        numbers = {r.id for r in report.references if r.paper_id in origin}
        report.references = [r for r in report.references if r.id not in numbers]
        for section in report.sections:
            section.findings = [f for f in section.findings if not set(f.cited_ids()) & numbers]
            section.body = "\n".join(
                line
                for line in section.body.splitlines()
                if not any(f"[{n}]" in line for n in numbers)
            )
    exported = export_report(report, EXPORTS[format])
    filename = f"source-list-{source_list_id}.{exported.extension}"
    return Response(
        exported.content,
        media_type=exported.media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get("/source-lists/{source_list_id}/runs", responses={**AUTH_RESPONSES, **NOT_FOUND})
async def source_list_runs(
    source_list_id: uuid.UUID, uow: Current, caller: Reader
) -> dict[str, Any]:
    """Run history (newest first) with each run's refinement iterations and its diff to the run
    before (`new` / `changed` / `dropped` sources; null for a failed run or a snapshot past the
    retention); the next scheduled run first; `request` is the stored request re-runs repeat."""
    report = or_404(
        await uow.reports.get(source_list_id, kind="source_list"),
        f"no source list {source_list_id}",
    )
    book = uow.source_lists
    schedule = await book.schedule(source_list_id)
    diffs = await uow.reports.diffs(source_list_id)
    runs: list[dict[str, Any]] = []
    if schedule is not None and schedule.status == "active" and schedule.next_run_at:
        runs.append({"run_id": None, "status": "scheduled", "at": schedule.next_run_at.isoformat()})
    for run in await book.runs(source_list_id):
        iterations = [
            {
                "iteration": i.iteration,
                "query": i.query,
                "counts": i.counts,
                "memo": i.memo,
                "stop_reason": i.stop_reason,
            }
            for i in await book.iterations(run.run_id)
        ]
        runs.append(
            {
                "run_id": run.run_id,
                "status": run.status,
                "trigger": run.trigger,
                "at": run.started_at.isoformat(),
                "finished_at": run.finished_at.isoformat() if run.finished_at else None,
                "sources": run.sources,
                "version": run.version,
                "stop_reason": run.stop_reason,
                "error": run.error,
                "iterations": iterations,
                "diff": diffs.get(run.version) if run.version is not None else None,
            }
        )
    return {
        "source_list_id": str(source_list_id),
        "schedule": _schedule_view(schedule),
        "request": report.request,
        "runs": runs,
    }


@router.post(
    "/source-lists/{source_list_id}/runs",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=SourceListAccepted,
    responses={
        **AUTH_RESPONSES,
        **OWNED_RESPONSES,
        **NOT_FOUND,
        409: {"description": "a run of this list is in progress, or no stored request"},
        **QUOTA_RESPONSES,
    },
)
async def rerun_source_list(
    source_list_id: uuid.UUID,
    ledger: LedgerDoor,
    caller: Researcher,
    quotas: KeyQuotas,
) -> SourceListAccepted:
    """Run the list again with its stored request (the seed's Re-run button), clamped to the
    workspace's current limits: a new snapshot and its diff; preferred and removed sources hold."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        report = or_404(
            await uow.reports.get(source_list_id, kind="source_list"),
            f"no source list {source_list_id}",
        )
        require_owner(caller, report, "source list")
        try:
            stored = RequestSourceList.model_validate(
                {**report.request, "source_list_id": source_list_id}
            )
        except (
            ValidationError
        ) as exc:  # a list stored before requests were kept, or by a newer writer
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"source list {source_list_id} has no stored request to repeat",
            ) from exc
        request = clamp(
            stored.model_copy(update={"trigger": "rerun", "origin": "api"}),
            await uow.limits.of(stored.workspace),
        )
        await quotas.admit(
            uow, caller, "source_list", subject_id=source_list_id, run_id=request.run_id
        )
        if await uow.reports.refresh(source_list_id, run_id=request.run_id) is None:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"source list {source_list_id} is {report.status}; wait for the run to end",
            )
        _send(uow, request)
    return SourceListAccepted(
        source_list_id=source_list_id,
        run_id=request.run_id,
        request=request.model_dump(mode="json", exclude={"trigger", "origin"}),
    )


@router.patch(
    "/source-lists/{source_list_id}/schedule",
    responses={
        **AUTH_RESPONSES,
        **NOT_FOUND,
        409: {"description": "a modified frequency beyond the workspace's minimum update interval"},
    },
)
async def change_schedule(
    source_list_id: uuid.UUID, body: ScheduleChange, ledger: LedgerDoor, caller: Admin
) -> dict[str, Any]:
    """Pause, resume, cancel or modify (a new update_frequency) a list's schedule."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        book = uow.source_lists
        current = await book.schedule(source_list_id)
        if current is None or current.status == "cancelled":
            raise HTTPException(
                status.HTTP_404_NOT_FOUND, f"source list {source_list_id} has no live schedule"
            )
        every = None
        if isinstance(body, ScheduleModify):
            limits = await uow.limits.of(current.workspace)
            refused = schedule_refusal(
                body.update_frequency, 0, limits
            )  # this list already holds its slot
            if refused:
                raise HTTPException(status.HTTP_409_CONFLICT, refused)
            every = duration_seconds(body.update_frequency)
        row = await book.change_schedule(
            source_list_id,
            body.action,
            now=datetime.now(UTC),
            update_frequency=body.update_frequency,
            every_s=every,
        )
        assert row is not None
        view = _schedule_view(row)
    return {"source_list_id": str(source_list_id), "schedule": view}
