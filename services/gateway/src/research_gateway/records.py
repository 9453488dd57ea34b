"""The ledger's records for HTTP clients: findings, the audit log (`uow.audit_log`) and a live
stream of claim events (SSE)."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse

from research_contracts import subjects
from research_contracts.views import AuditView, FindingView
from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, Reading
from research_gateway.limits import TOO_MANY_STREAMS
from research_gateway.storable import STORABLE, TEXT_QUERY
from research_runs.sse import RECONNECT_MS

# A free-text filter of a read route (an agent, a finding kind, an audit action).
Filter = Annotated[str | None, TEXT_QUERY, Query(max_length=200, json_schema_extra=STORABLE)]

# An RFC 3339 time with its offset (`2026-11-28T16:00:00Z`), nothing else: a bare number or a date
# would be read as something the caller did not write. Digits spelled `[0-9]` (see `storable`).
RFC3339 = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?"
    r"([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)


def _moment(name: str, value: str | None) -> datetime | None:
    """The time an RFC 3339 query value names; a day that does not exist is a 422. Year 0, which
    RFC 3339 allows and Python cannot hold, reads as year 1: no event is older than either."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(re.sub(r"^0000", "0001", value.upper()))
    except ValueError as exc:
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", name), "msg": f"not a time: {exc}"}]
        ) from None


Moment = Annotated[
    str | None,
    Query(pattern=RFC3339, max_length=40, json_schema_extra={"format": "date-time"}),
]

router = APIRouter(
    prefix=API, tags=["ledger"], dependencies=[Depends(require("reader"))], responses=AUTH_RESPONSES
)


@router.get("/findings", response_model=list[FindingView])
async def list_findings(
    uow: Reading,
    agent: Filter = None,
    kind: Filter = None,
    unresolved: bool = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[FindingView]:
    """Findings of the periodic agents, newest first; expired findings are never returned."""
    found = await uow.findings.browse(agent=agent, kind=kind, unresolved=unresolved, limit=limit)
    return [FindingView.model_validate(f.model_dump(exclude={"resolved_by"})) for f in found]


@router.get("/audit", response_model=list[AuditView])
async def list_audit(
    uow: Reading,
    action: Filter = None,
    task_id: uuid.UUID | None = None,
    claim_id: uuid.UUID | None = None,
    key_id: uuid.UUID | None = None,
    since: Moment = None,
    until: Moment = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[AuditView]:
    """The audit log, newest first, filtered by action, task, claim, the key that acted or was
    acted on (`subject_ids.key_id`), and time (`since` ≤ occurred_at < `until`)."""
    rows = await uow.audit_log.events(
        action=action,
        task_id=task_id,
        claim_id=claim_id,
        key_id=key_id,
        since=_moment("since", since),
        until=_moment("until", until),
        limit=limit,
    )
    return [AuditView.model_validate(r, from_attributes=True) for r in rows]


class EventStream(StreamingResponse):
    """A Server-Sent Events stream (so the OpenAPI document says `text/event-stream`, not JSON)."""

    media_type = "text/event-stream"


@router.get(
    "/events",
    response_class=EventStream,
    responses={
        200: {"description": "`event: pending|decided` frames, `data:` the claim message as JSON"},
        429: TOO_MANY_STREAMS,
    },
)
async def stream_events(request: Request) -> StreamingResponse:
    """Server-sent events: every claim proposed (`research.claim.pending`) and decided (`research.claim.decided`).

    The stream ends after `GATEWAY_EDGE__STREAM_MAX_S` (an `EventSource` reconnects after its
    `retry:` hint, its key checked again)."""
    broker = request.app.state.broker
    until = time.monotonic() + request.app.state.edge.stream_max_s
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(maxsize=1000)

    async def _forward(msg: Any) -> None:
        if not queue.full():
            queue.put_nowait((msg.subject, msg.data))

    nc = (
        broker.connection
    )  # the broker's nats-py client: a plain core subscription, no consumer state
    subscription = await nc.subscribe("research.claim.*", cb=_forward)

    async def _events() -> AsyncIterator[bytes]:
        try:
            yield f"retry: {RECONNECT_MS}\n: connected\n\n".encode()
            while not await request.is_disconnected():
                left = until - time.monotonic()
                if left <= 0:
                    return
                try:
                    subject, data = await asyncio.wait_for(queue.get(), timeout=min(15, left))
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                event = (
                    "decided" if subject == subjects.CLAIM_DECIDED else subject.rsplit(".", 1)[-1]
                )
                yield f"event: {event}\ndata: {json.dumps(json.loads(data))}\n\n".encode()
        finally:
            await subscription.unsubscribe()

    return EventStream(_events())
