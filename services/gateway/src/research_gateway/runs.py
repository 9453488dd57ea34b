"""The live trace of a run (review, verification, source list) as Server-Sent Events.

`research_runs.run_events_router` serves `GET /api/research/v1/runs/{run_id}/events`
(resumable with `Last-Event-ID`); here it gets the gateway's JetStream context and the reader
role, like every other read route.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI

from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API
from research_runs import run_events_router


def router(app: FastAPI) -> APIRouter:
    """The run-events route of `app`, reading through the broker's connection (per request)."""
    guarded = APIRouter(dependencies=[Depends(require("reader"))], responses=AUTH_RESPONSES)
    guarded.include_router(
        run_events_router(lambda: app.state.broker.connection.jetstream(), prefix=API)
    )
    return guarded
