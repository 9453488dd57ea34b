"""The SSE route of run events: `GET /api/research/v1/runs/{run_id}/events`.

Each event goes out as `id: <stream sequence>`, `event: <type>`, `data: <event JSON>`. A
browser's EventSource sends the last id back as `Last-Event-ID` when it reconnects, and the
stream resumes right after it (`?last_event_id=` does the same for a first connection). The
response ends after the run's `done` event. FastAPI's own SSE support does the framing and the
keep-alive comments; the gateway only includes the router:

    app.include_router(run_events_router(lambda: app.state.js))
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from enum import Enum
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query
from fastapi.sse import EventSourceResponse, ServerSentEvent
from nats.js import JetStreamContext

from research_contracts.runs import RUN_ID_PATTERN
from research_runs.replay import replay

log = logging.getLogger(__name__)

JetStreamProvider = Callable[[], JetStreamContext | Awaitable[JetStreamContext]]
RECONNECT_MS = 2000


def resume_point(
    last_event_id: Annotated[
        str | None, Header(alias="Last-Event-ID", description="Resume after this event id.")
    ] = None,
    after: Annotated[
        int | None,
        Query(
            alias="last_event_id",
            ge=0,
            description="Resume after this event id (first connection).",
        ),
    ] = None,
) -> int:
    """The stream sequence to resume after: the `Last-Event-ID` header wins over the query
    parameter; a header that is not a non-negative integer is a 422 (it was never ours)."""
    if last_event_id is not None and last_event_id.strip():
        try:
            value = int(last_event_id.strip())
        except ValueError:
            raise HTTPException(
                422, detail="Last-Event-ID must be the integer id of a run event"
            ) from None
        if value < 0:
            raise HTTPException(422, detail="Last-Event-ID must not be negative")
        return value
    return after or 0


def run_events_router(
    jetstream: JetStreamProvider,
    *,
    prefix: str = "/api/research/v1",
    tags: list[str | Enum] | None = None,
) -> APIRouter:
    """A router with the run-events SSE route; `jetstream()` returns (or awaits to) the
    JetStream context of the gateway's connection, looked up per request."""
    router = APIRouter(prefix=prefix, tags=tags or ["runs"])

    async def _js() -> JetStreamContext:
        found = jetstream()
        return await found if inspect.isawaitable(found) else found

    @router.get(
        "/runs/{run_id}/events",
        response_class=EventSourceResponse,
        summary="Live trace of a run as Server-Sent Events (resumable with Last-Event-ID)",
        responses={422: {"description": "Malformed run id or Last-Event-ID"}},
    )
    async def run_events(
        run_id: Annotated[
            str,
            Path(
                pattern=RUN_ID_PATTERN,
                description="Id of the review / verification / source-list run.",
            ),
        ],
        after_seq: Annotated[int, Depends(resume_point)],
    ) -> AsyncIterator[ServerSentEvent]:
        js = await _js()
        yield ServerSentEvent(retry=RECONNECT_MS, comment=f"run {run_id} after {after_seq}")
        async for stream_seq, event in replay(js, run_id, after_seq, follow=True):
            yield ServerSentEvent(
                id=str(stream_seq), event=event.type, raw_data=event.model_dump_json()
            )

    return router
