"""The SSE route of run events: `GET /api/research/v1/runs/{run_id}/events`.

Each event goes out as `id: <stream sequence>`, `event: <type>`, `data: <event JSON>`. A
browser's EventSource sends the last id back as `Last-Event-ID` when it reconnects, and the
stream resumes right after it (`?last_event_id=` does the same for a first connection). The
response ends after the run's `done` event, or after the router's `follow_s` (the client then
reconnects with `Last-Event-ID`). A run id nothing was recorded or accepted under is a 404 at
once: no stream is opened for it. FastAPI's own SSE support does the framing and the
keep-alive comments; the gateway only includes the router:

    app.include_router(run_events_router(lambda: app.state.js))
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from enum import Enum
from typing import Annotated, Final

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query
from fastapi.sse import EventSourceResponse, ServerSentEvent
from nats.js import JetStreamContext

from research_contracts.runs import RUN_ID_PATTERN
from research_runs.replay import last_event, replay

log = logging.getLogger(__name__)

JetStreamProvider = Callable[[], JetStreamContext | Awaitable[JetStreamContext]]
RECONNECT_MS = 2000


MAX_EVENT_ID: Final = 10**15 - 1  # fifteen digits: exact as a JSON number; no stream gets near it
EVENT_ID_PATTERN: Final = (
    r"^([0-9]{1,15})?$"  # digits only (no sign, no `_`, no other script's); empty: none
)
RunKnown = Callable[[str], Awaitable[bool]]


def resume_point(
    # `str` with an empty default, not `str | None`: the schema's `null` branch made a fuzzer send
    # the header `null`, schema-valid and refused.
    last_event_id: Annotated[
        str,
        Header(
            alias="Last-Event-ID",
            pattern=EVENT_ID_PATTERN,
            description=f"Resume after this event id (an integer, 0 to {MAX_EVENT_ID}).",
        ),
    ] = "",
    after: Annotated[
        int | None,
        Query(
            alias="last_event_id",
            ge=0,
            le=MAX_EVENT_ID,
            description="Resume after this event id (first connection).",
        ),
    ] = None,
) -> int:
    """The stream sequence to resume after: the `Last-Event-ID` header wins over the query
    parameter. Either one that is not an integer from 0 to `MAX_EVENT_ID` is a 422 (the schema
    says so too: a header of 400 digits was taken as a start sequence)."""
    if last_event_id:
        return int(last_event_id)
    return after or 0


def run_events_router(
    jetstream: JetStreamProvider,
    *,
    prefix: str = "/api/research/v1",
    tags: list[str | Enum] | None = None,
    known: RunKnown | None = None,
    follow_s: Callable[[], float] = lambda: math.inf,
) -> APIRouter:
    """A router with the run-events SSE route; `jetstream()` returns (or awaits to) the
    JetStream context of the gateway's connection, looked up per request. A run with no stored
    event that `known(run_id)` does not know either (a run accepted but not started yet) is a
    404 before any stream opens; a stream ends after `follow_s()` seconds (the client resumes)."""
    router = APIRouter(prefix=prefix, tags=tags or ["runs"])

    async def _js() -> JetStreamContext:
        found = jetstream()
        return await found if inspect.isawaitable(found) else found

    async def existing_run(
        run_id: Annotated[str, Path(pattern=RUN_ID_PATTERN)],
        after_seq: Annotated[int, Depends(resume_point)],  # a malformed one is a 422 first
    ) -> str:
        if await last_event(await _js(), run_id) is None and not (
            known is not None and await known(run_id)
        ):
            raise HTTPException(404, detail="no such run")
        return run_id

    @router.get(
        "/runs/{run_id}/events",
        response_class=EventSourceResponse,
        summary="Live trace of a run as Server-Sent Events (resumable with Last-Event-ID)",
        dependencies=[Depends(existing_run)],
        responses={
            404: {"description": "no such run: nothing was recorded or accepted under this id"},
            422: {"description": "Malformed run id or Last-Event-ID"},
        },
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
        async for stream_seq, event in replay(
            js, run_id, after_seq, follow=True, follow_s=follow_s()
        ):
            yield ServerSentEvent(
                id=str(stream_seq), event=event.type, raw_data=event.model_dump_json()
            )

    return router
