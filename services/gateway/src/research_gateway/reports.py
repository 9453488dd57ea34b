"""Reports of every mode (review, verification, source list): read one, export one.

    GET /api/research/v1/reports/{report_id}                      the report and its current version
    GET /api/research/v1/reports/{report_id}?version=2            an older version
    GET /api/research/v1/reports/{report_id}/export?format=pdf    md | pdf | bib | ris | csljson

The modes store their reports through `research_ledger` (tables `reports`, `report_versions`);
this router only reads them, so the CLI's `export ID --format …` and the console work the same
for the three kinds. A version's structured `content` is a `research_reports.Report` (or holds
one under `report`, as a source-list snapshot does); a version without one exports its stored
Markdown only (other formats answer 409). Format names: the modes' short ones (`md`, `bib`,
`csljson`) or `research_reports`' (`markdown`, `bibtex`, `csl-json`).

An export is rendered in a worker thread (`rendered`), two at a time per process, so a long PDF
never stalls the event loop (every other request of the process waited for it); one that takes
longer than `GATEWAY_EDGE__EXPORT_TIMEOUT_S`, waiting for a worker included, is a 503.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response, status
from pydantic import BaseModel, ValidationError

from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, Reading, or_404
from research_gateway.papers import studies_of
from research_gateway.quotas import QUOTA_RESPONSES, PdfExportSlot
from research_ledger import UnitOfWork
from research_reports import Report
from research_reports.exports import EXPORT_FORMATS, Export, ExportFormat, export_report

FORMATS: dict[str, ExportFormat] = {
    "md": ExportFormat.markdown,
    "markdown": ExportFormat.markdown,
    "pdf": ExportFormat.pdf,
    "bib": ExportFormat.bibtex,
    "bibtex": ExportFormat.bibtex,
    "ris": ExportFormat.ris,
    "csljson": ExportFormat.csl_json,
    "csl-json": ExportFormat.csl_json,
}
# The schema lists the format names and bounds the version, so a schema-valid request is never a 422/500.
FormatName = Literal["md", "markdown", "pdf", "bib", "bibtex", "ris", "csljson", "csl-json"]
MAX_VERSION = 2**31 - 1  # report_versions.version is a Postgres integer
EXPORTED: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the exported file (Content-Disposition: attachment)",
        "content": {media.split(";")[0]: {} for media, _ in EXPORT_FORMATS.values()},
    },
    503: {
        "description": "the export did not finish within `GATEWAY_EDGE__EXPORT_TIMEOUT_S` (the reason in "
        "`detail`); retry later"
    },
}
RENDERERS = anyio.CapacityLimiter(
    2
)  # exports rendered at once per process; the rest wait their turn


async def rendered(request: Request, document: Report, wanted: ExportFormat) -> Export:
    """`document` exported as `wanted` in a worker thread, within the gateway's export time cap
    (503 past it: the thread is left to finish, its result dropped)."""
    limit: float = request.app.state.edge.export_timeout_s
    try:
        with anyio.fail_after(limit):
            return await anyio.to_thread.run_sync(
                export_report, document, wanted, abandon_on_cancel=True, limiter=RENDERERS
            )
    except TimeoutError:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            f"the {wanted.value} export took longer than {limit:g} s; retry later",
        ) from None


router = APIRouter(
    prefix=API,
    tags=["reports"],
    dependencies=[Depends(require("reader"))],
    responses=AUTH_RESPONSES,
)


class ReportView(BaseModel):
    report_id: uuid.UUID
    kind: str
    status: str
    run_id: str
    subject: str
    request: dict[str, Any] = {}
    current_version: int
    stale_reason: str | None
    error: str | None
    created_at: datetime
    updated_at: datetime
    version: int | None = None
    markdown: str = ""
    content: dict[str, Any] = {}
    citation_check: dict[str, Any] = {}
    review: dict[str, Any] = {}
    claim_ids: list[uuid.UUID] = []
    diff: dict[str, Any] | None = None
    studies: dict[
        str, str
    ] = {}  # reference id → its paper's design and size, as its abstract states them


async def _load(uow: UnitOfWork, report_id: uuid.UUID, version: int | None) -> tuple[Any, Any]:
    """The report (404 when unknown) and its `version` (404 when it has none such) or its current
    one (None when it has none yet): `(ReportRow, ReportVersionRow | None)`."""
    report = or_404(await uow.reports.get(report_id), f"no report {report_id}")
    found = await uow.reports.version(report_id, version or report.current_version)
    if found is None and version is not None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"report {report_id} has no version {version}"
        )
    return report, found


@router.get(
    "/reports/{report_id}",
    response_model=ReportView,
    responses={404: {"description": "no such report or version"}},
)
async def get_report(
    report_id: uuid.UUID,
    uow: Reading,
    version: Annotated[int | None, Query(ge=1, le=MAX_VERSION)] = None,
) -> ReportView:
    """A report (any kind) with its current version, or `version`."""
    report, found = await _load(uow, report_id, version)
    view = ReportView(
        report_id=report.id,
        kind=report.kind,
        status=report.status,
        run_id=report.run_id,
        subject=report.subject,
        request=report.request or {},
        current_version=report.current_version,
        stale_reason=report.stale_reason,
        error=report.error,
        created_at=report.created_at,
        updated_at=report.updated_at,
    )
    if found is not None:
        view = view.model_copy(
            update={
                "version": found.version,
                "markdown": found.markdown,
                "content": found.content,
                "citation_check": found.citation_check,
                "review": found.review,
                "claim_ids": list(found.claim_ids or []),
                "diff": found.diff,
                "studies": await studies_of(uow, found.content or {}),
            }
        )
    return view


@router.get(
    "/reports/{report_id}/export",
    response_class=Response,
    responses={
        **EXPORTED,
        404: {"description": "no such report or version"},
        409: {
            "description": "the report has no version yet, or no structured content for this format"
        },
        **QUOTA_RESPONSES,
    },
)
async def export(
    report_id: uuid.UUID,
    uow: Reading,
    pdf_slot: PdfExportSlot,
    request: Request,
    format: Annotated[FormatName, Query(description="md | pdf | bib | ris | csljson")] = "md",
    version: Annotated[int | None, Query(ge=1, le=MAX_VERSION)] = None,
) -> Response:
    """The report as Markdown or PDF, or its references as BibTeX, RIS or CSL-JSON."""
    wanted = FORMATS[format]
    report, found = await _load(uow, report_id, version)
    if found is None:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"report {report_id} has no version yet (status {report.status})",
        )
    name = f"{report.kind}-{report.id}-v{found.version}"
    document = _document(found.content)
    if document is None:
        if wanted is not ExportFormat.markdown or not found.markdown:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"report {report_id} has no structured content to export as {format}",
            )
        return _file(found.markdown.encode(), "text/markdown; charset=utf-8", f"{name}.md")
    exported = await rendered(request, document, wanted)
    return _file(exported.content, exported.media_type, f"{name}.{exported.extension}")


def _document(content: dict[str, Any]) -> Report | None:
    """The `Report` a version's content is, or holds under `report`; None when neither."""
    for candidate in (content, content.get("report")):
        if isinstance(candidate, dict):
            try:
                return Report.model_validate(candidate)
            except ValidationError:
                continue
    return None


def _file(content: bytes, media_type: str, filename: str) -> Response:
    return Response(
        content,
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
