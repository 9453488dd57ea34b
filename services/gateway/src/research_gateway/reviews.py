"""Literature reviews (seed 000) over HTTP: submit, read, versions, refresh, export.

    POST /reviews                     researcher  {topic, filters?, sources?, max_iterations ≤ 2} → 202 {review_id, run_id}
    GET  /reviews?status=stale        reader      the reviews, newest first: status, stale reason, version
    GET  /reviews/{id}                reader      status, iteration(s), report, peer review, citation check, claims
    GET  /reviews/{id}/versions       reader      every version: verdict, tag mix, diff to the one before
    POST /reviews/{id}/refresh        researcher  a new run → a new version + diff (409 while one is running);
                                                  the key that asked for the review, or an admin (`ownership.py`)
    GET  /reviews/{id}/export?format=md|pdf|bib|ris|csljson   reader

The body is validated by `ReviewRequest`, the caller's part of the `RequestReview` command, so the
HTTP answer (422 with the reason: empty or 10 kB topic, unknown source, more than two rounds) and
the bus (dead letter) agree; the run id is the server's, drawn at random (`new_run_id`): a body
naming one is refused (422), and the `review_id` a client may choose never goes into it. The
gateway opens the report, with its owner, and stages the command for
`research.review.requested` (`Nats-Msg-Id` per run) in the ledger's outbox in the same
transaction: the gateway's relay publishes it after the commit (`research_ledger.outbox`), so the
reviewer always finds the report open, and a bus that is down delays the run, never loses it. A
refresh moves the report to `running` under a new run and stages its command the same way.
The live trace is `GET /runs/{run_id}/events` (SSE, `runs.py`).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from pydantic import BaseModel

from research_contracts import subjects
from research_contracts.reviews import RequestReview, ReviewRequest, topic_key
from research_contracts.runs import new_run_id
from research_gateway.auth import AUTH_RESPONSES, Reader, Researcher
from research_gateway.deps import API, SERVICE, Current, LedgerDoor, Reading, or_404
from research_gateway.ownership import OWNED_RESPONSES, owner_of, require_owner
from research_gateway.quotas import QUOTA_RESPONSES, KeyQuotas, PdfExportSlot
from research_gateway.reports import EXPORTED, FORMATS, MAX_VERSION, FormatName, rendered
from research_ledger import UnitOfWork
from research_ledger.deidentified import check_report
from research_platform.logging import get_logger
from research_reports import Report

log = get_logger(__name__)
router = APIRouter(prefix=API, tags=["reviews"], responses=AUTH_RESPONSES)
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "no such review"}}


class ReviewAccepted(BaseModel):
    review_id: uuid.UUID
    run_id: str


ReportState = Literal[
    "running", "completed", "stale", "failed"
]  # research_ledger.ReportStatus (a test keeps them equal)


class ReviewSummary(BaseModel):
    """One review in the list: enough to see which are stale and why."""

    review_id: uuid.UUID
    topic: str
    status: ReportState
    version: int
    stale_reason: str | None
    error: str | None
    run_id: str
    created_at: datetime
    updated_at: datetime


def _send(uow: UnitOfWork, command: RequestReview) -> None:
    """Stage the command in the outbox of the transaction that opens or refreshes its report."""
    uow.outbox.add(
        subjects.REVIEW_REQUESTED,
        command,
        msg_id=f"review-{command.review_id}-{command.effective_run_id()}",
    )


@router.post(
    "/reviews",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ReviewAccepted,
    responses={
        422: {
            "description": "bad input (empty or oversized topic, unknown source, > 2 iterations)"
        },
        409: {"description": "this review_id exists"},
        **QUOTA_RESPONSES,
    },
)
async def submit_review(
    body: ReviewRequest, ledger: LedgerDoor, caller: Researcher, quotas: KeyQuotas
) -> ReviewAccepted:
    """Ask for a literature review; follow `run_id` on /runs/{run_id}/events, poll /reviews/{id}."""
    command = RequestReview(
        **body.model_dump(), run_id=new_run_id("rv"), refresh=False, origin="api"
    )
    async with ledger.unit_of_work(service=SERVICE) as uow:
        if await uow.reports.get(command.review_id) is not None:
            raise HTTPException(
                status.HTTP_409_CONFLICT, "this review_id exists; refresh it instead"
            )
    report: dict[str, Any] = {
        "subject": command.topic,
        "subject_key": topic_key(command.topic),
        "request": command.model_dump(
            mode="json", include={"filters", "sources", "max_iterations", "origin"}
        ),
    }
    check_report(**report)  # the ledger's own check, before anything is published: one answer (422)
    async with (
        quotas.taken(
            caller, "review", subject_id=command.review_id, run_id=command.effective_run_id()
        ),
        ledger.unit_of_work(service=SERVICE) as uow,
    ):
        if not await uow.reports.open(
            command.review_id,
            kind="review",
            run_id=command.effective_run_id(),
            owner=owner_of(caller),
            **report,
        ):
            raise HTTPException(
                status.HTTP_409_CONFLICT, "this review_id exists; refresh it instead"
            )
        _send(uow, command)
    return ReviewAccepted(review_id=command.review_id, run_id=command.effective_run_id())


@router.get("/reviews", response_model=list[ReviewSummary])
async def list_reviews(
    uow: Reading,
    caller: Reader,
    status: Annotated[ReportState | None, Query(description="only reviews in this state")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[ReviewSummary]:
    """Reviews, most recently updated first; `status=stale` lists the ones whose claims no longer hold."""
    rows = await uow.reports.listing(kind="review", status=status, limit=limit)
    return [
        ReviewSummary(
            review_id=r.id,
            topic=r.subject,
            status=r.status,
            version=r.current_version,
            stale_reason=r.stale_reason,
            error=r.error,
            run_id=r.run_id,
            created_at=r.created_at,
            updated_at=r.updated_at,
        )
        for r in rows
    ]


@router.get("/reviews/{review_id}", responses=NOT_FOUND)
async def get_review(review_id: uuid.UUID, uow: Current, caller: Reader) -> dict[str, Any]:
    """The review's status and its current version: report (structured and Markdown), peer
    review (verdict, issues, missed papers, every round), citation check and the ledger claims."""
    row = or_404(await uow.reports.get(review_id, kind="review"), f"no review {review_id}")
    version = await uow.reports.version(review_id)
    view: dict[str, Any] = {
        "review_id": row.id,
        "status": row.status,
        "run_id": row.run_id,
        "topic": row.subject,
        "topic_key": row.subject_key,
        "version": row.current_version,
        "stale_reason": row.stale_reason,
        "error": row.error,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
    if version is None:
        return view
    statuses = await uow.claim_views.statuses(list(version.claim_ids or []))
    review = dict(version.review)
    findings = Report.model_validate(version.content).findings()
    view.update(
        {
            "iterations": len(review.get("rounds", [])),
            "verdict": review.get("verdict"),
            "review": review,
            "citation_check": version.citation_check,
            "report": version.content,
            "markdown": version.markdown,
            "claims": [
                {
                    "claim_id": f.claim_id,
                    "finding_id": f.key(),
                    "tag": f.tag,
                    "status": statuses.get(uuid.UUID(f.claim_id)) if f.claim_id else None,
                }
                for f in findings
                if f.claim_id
            ],
            "diff": version.diff,
        }
    )
    return view


@router.get("/reviews/{review_id}/versions", responses=NOT_FOUND)
async def review_versions(
    review_id: uuid.UUID, uow: Current, caller: Reader
) -> list[dict[str, Any]]:
    or_404(await uow.reports.get(review_id, kind="review"), f"no review {review_id}")
    out = []
    for version in await uow.reports.versions(review_id):
        out.append(
            {
                "version": version.version,
                "run_id": version.run_id,
                "created_at": version.created_at,
                "verdict": version.review.get("verdict"),
                "tags": Report.model_validate(version.content).tag_counts(),
                "claims": len(version.claim_ids),
                "citation_ok": version.citation_check.get("ok"),
                "diff": version.diff,
            }
        )
    return out


@router.post(
    "/reviews/{review_id}/refresh",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ReviewAccepted,
    responses={
        **NOT_FOUND,
        **OWNED_RESPONSES,
        409: {"description": "a run of this review is in progress"},
        **QUOTA_RESPONSES,
    },
)
async def refresh_review(
    review_id: uuid.UUID, ledger: LedgerDoor, caller: Researcher, quotas: KeyQuotas
) -> ReviewAccepted:
    """Run the review again: a new version and its diff to the current one (stale or not)."""
    run_id = new_run_id("rv")
    async with ledger.unit_of_work(service=SERVICE) as uow:
        row = or_404(await uow.reports.get(review_id, kind="review"), f"no review {review_id}")
        require_owner(caller, row, "review")
        await quotas.admit(uow, caller, "review", subject_id=review_id, run_id=run_id)
        if await uow.reports.refresh(review_id, run_id=run_id) is None:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"review {review_id} is {row.status}; wait for the run to end",
            )
        stored = dict(row.request)
        _send(
            uow,
            RequestReview(
                review_id=review_id,
                run_id=run_id,
                topic=row.subject,
                refresh=True,
                origin="api",
                **{k: stored[k] for k in ("filters", "sources", "max_iterations") if k in stored},
            ),
        )
    return ReviewAccepted(review_id=review_id, run_id=run_id)


@router.get(
    "/reviews/{review_id}/export",
    responses={
        **EXPORTED,
        **NOT_FOUND,
        409: {"description": "no version yet"},
        **QUOTA_RESPONSES,
    },
)
async def export_review(
    review_id: uuid.UUID,
    uow: Current,
    caller: Reader,
    pdf_slot: PdfExportSlot,
    request: Request,
    format: FormatName = Query("md", description="md | pdf | bib | ris | csljson"),
    version: int | None = Query(None, ge=1, le=MAX_VERSION),
) -> Response:
    or_404(await uow.reports.get(review_id, kind="review"), f"no review {review_id}")
    stored = await uow.reports.version(review_id, version)
    if stored is None:
        raise HTTPException(status.HTTP_409_CONFLICT, "the review has no version yet")
    exported = await rendered(request, Report.model_validate(stored.content), FORMATS[format])
    filename = f"review-{review_id}-v{stored.version}.{exported.extension}"
    return Response(
        exported.content,
        media_type=exported.media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
