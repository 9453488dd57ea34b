"""Claim verifications (seed 000, mode 2) over HTTP: submit and read.

    POST /verifications        researcher  {claim, watch?, sources?, filters?} → 202 {verification_id, run_id}
    GET  /verifications/{id}   reader      status, verdict · confidence, report, citation check, verdict history
    GET  /watched-claims       reader      the watched claims, next due first, each with its verdict history

The body is validated by `RequestVerification` (empty, wordless or oversized claim, unknown source
→ 422 with the reason), so the HTTP answer and the bus's dead letter agree. The gateway opens the
report, with its owner, and stages the command for `research.verify.requested` (`Nats-Msg-Id` per
run) in the ledger's outbox in the same transaction; its relay publishes it after the commit
(`research_ledger.outbox`), so the verifier always finds the report open. With `watch: true` the verifier enters the claim into the
watched claims the replicator re-verifies on schedule (when it opens the first run). The live trace is `GET /runs/{run_id}/events`;
exports are `GET /reports/{id}/export`.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, status
from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
)

from research_contracts import subjects
from research_contracts.reviews import EVIDENCE_SOURCES, ReviewFilters, worded_pattern
from research_contracts.runs import new_run_id
from research_contracts.verifications import (
    CLAIM_MAX_CHARS,
    CLAIM_WORD,
    RequestVerification,
)
from research_gateway.auth import AUTH_RESPONSES, Reader, Researcher
from research_gateway.deps import API, SERVICE, Current, LedgerDoor, Reading
from research_gateway.ownership import owner_of
from research_gateway.quotas import QUOTA_RESPONSES, KeyQuotas
from research_gateway.storable import UNSTORABLE_RANGE, storable_text
from research_ledger.deidentified import check_report
from research_platform.logging import get_logger

log = get_logger(__name__)
router = APIRouter(prefix=API, tags=["verifications"], responses=AUTH_RESPONSES)
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "no such verification"}}
Source = Literal[EVIDENCE_SOURCES]  # type: ignore[valid-type]  # mypy reads no Literal of a tuple; the schema does
# Storable (no control characters) and worded (`CLAIM_PATTERN`): one pattern, since a schema holds one.
CLAIM_SCHEMA_PATTERN = worded_pattern(CLAIM_WORD, refused=UNSTORABLE_RANGE)
ClaimText = Annotated[
    str, AfterValidator(storable_text), Field(json_schema_extra={"pattern": CLAIM_SCHEMA_PATTERN})
]


class VerificationRequest(BaseModel):
    """What a caller may ask; `statement` is accepted as another name for `claim`."""

    model_config = ConfigDict(extra="forbid")

    claim: ClaimText = Field(
        min_length=3,
        max_length=CLAIM_MAX_CHARS,
        validation_alias=AliasChoices("claim", "statement"),
        examples=["Aspirin reduces the risk of stroke"],
    )
    watch: StrictBool = Field(
        default=False,
        description="Re-verify the claim on the watch schedule (default every 30 days).",
    )
    sources: list[Source] = Field(
        default_factory=lambda: ["corpus"], max_length=len(EVIDENCE_SOURCES)
    )
    filters: ReviewFilters = Field(default_factory=ReviewFilters)


class VerificationAccepted(BaseModel):
    verification_id: uuid.UUID
    run_id: str


class VerdictEntry(BaseModel):
    run_id: str
    verdict: str
    confidence: str
    recorded_at: datetime
    judge: str | None = Field(
        default=None, description="The judge's version that gave the verdict (model and rule set)."
    )
    change: str | None = Field(
        default=None,
        description="How it differs from the entry before: `judge` (another judge gave it), "
        "`evidence` (the same judge read changed evidence), or null (unchanged, or the first).",
    )


class WatchedClaimView(BaseModel):
    """A watched claim: when it is next re-verified and every verdict it got, oldest first."""

    verification_id: uuid.UUID
    claim: str
    interval_days: float
    next_due_at: datetime
    runs: int
    reverifying: bool = Field(
        description="A re-verification was requested and has not reported yet."
    )
    created_at: datetime
    history: list[VerdictEntry]


@router.post(
    "/verifications",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=VerificationAccepted,
    responses={
        422: {"description": "bad input (empty, wordless or oversized claim, unknown source)"},
        **QUOTA_RESPONSES,
    },
)
async def submit_verification(
    body: VerificationRequest,
    ledger: LedgerDoor,
    caller: Researcher,
    quotas: KeyQuotas,
) -> VerificationAccepted:
    """Verify a claim; follow `run_id` on /runs/{run_id}/events, poll /verifications/{id}."""
    verification_id = uuid.uuid4()
    try:
        command = RequestVerification(
            verification_id=verification_id,
            run_id=new_run_id("vf"),
            claim=body.claim,
            watch=body.watch,
            sources=list(body.sources),
            filters=body.filters,
        )
    except ValidationError as exc:
        raise HTTPException(422, [e["msg"] for e in exc.errors()]) from exc
    stored = command.claim  # de-identified when the command was parsed (research_privacy.boundary)
    report: dict[str, Any] = {
        "subject": stored,
        "subject_key": stored[:200].lower(),
        "request": command.model_dump(
            mode="json", include={"filters", "sources", "watch", "origin"}
        ),
    }
    check_report(**report)  # the ledger's own check, before anything is published: one answer (422)
    async with (
        quotas.taken(
            caller,
            "verification",
            subject_id=verification_id,
            run_id=command.effective_run_id(),
            watch=command.watch,
        ),
        ledger.unit_of_work(service=SERVICE) as uow,
    ):
        await uow.reports.open(
            verification_id,
            kind="verification",
            run_id=command.effective_run_id(),
            owner=owner_of(caller),
            **report,
        )
        uow.outbox.add(  # published after the commit, by the gateway's relay
            subjects.VERIFY_REQUESTED,
            command,
            msg_id=f"verify-{verification_id}-{command.effective_run_id()}",
        )
    return VerificationAccepted(verification_id=verification_id, run_id=command.effective_run_id())


@router.get("/verifications/{verification_id}", responses=NOT_FOUND)
async def get_verification(
    verification_id: uuid.UUID, uow: Current, caller: Reader
) -> dict[str, Any]:
    """The verification's status and current version: verdict, confidence, the 6-section report
    (structured and Markdown), its citation check, and — for a watched claim — the verdict history."""
    row = await uow.reports.get(verification_id, kind="verification")
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no verification {verification_id}")
    view: dict[str, Any] = {
        "verification_id": row.id,
        "status": row.status,
        "run_id": row.run_id,
        "claim": row.subject,
        "version": row.current_version,
        "stale_reason": row.stale_reason,
        "error": row.error,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
    watch = await uow.watched.get(verification_id)
    view["watch"] = (
        None
        if watch is None
        else {"interval_days": watch.interval_days, "next_due_at": watch.next_due_at}
    )
    view["history"] = [
        {
            "run_id": h.run_id,
            "verdict": h.verdict,
            "confidence": h.confidence,
            "recorded_at": h.recorded_at,
        }
        for h in await uow.watched.history(verification_id)
    ]
    version = await uow.reports.version(verification_id)
    if version is not None:
        review = dict(version.review)
        view.update(
            {
                "verdict": review.get("verdict"),
                "confidence": review.get("confidence"),
                "headline": review.get("headline"),
                "assessment": review,
                "citation_check": version.citation_check,
                "report": version.content,
                "markdown": version.markdown,
            }
        )
    return view


@router.get("/watched-claims", response_model=list[WatchedClaimView])
async def list_watched_claims(
    uow: Reading, caller: Reader, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> list[WatchedClaimView]:
    """Watched claims, the next due first, each with its verdict history (one query for each)."""
    claims = await uow.watched.listing(limit=limit)
    history: dict[uuid.UUID, list[VerdictEntry]] = {c.verification_id: [] for c in claims}
    if claims:
        for row in await uow.watched.histories(list(history)):
            entry = VerdictEntry.model_validate(row, from_attributes=True)
            earlier = history[row.verification_id]
            if earlier and (earlier[-1].verdict, earlier[-1].confidence) != (
                entry.verdict,
                entry.confidence,
            ):
                before = earlier[-1].judge
                entry.change = (
                    "judge" if before and entry.judge and before != entry.judge else "evidence"
                )
            earlier.append(entry)
    return [
        WatchedClaimView(
            verification_id=c.verification_id,
            claim=c.claim,
            interval_days=c.interval_days,
            next_due_at=c.next_due_at,
            runs=c.runs,
            reverifying=c.requested_run_id is not None,
            created_at=c.created_at,
            history=history[c.verification_id],
        )
        for c in claims
    ]
