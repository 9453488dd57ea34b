"""The live trace of a run (review, verification, source list) as Server-Sent Events.

`research_runs.run_events_router` serves `GET /api/research/v1/runs/{run_id}/events`
(resumable with `Last-Event-ID`); here it gets the gateway's JetStream context, the reader
role like every other read route, the ledger's word on which runs exist (a run accepted but
not started yet has no events; any other id is a 404 before a stream opens) and the stream
lifetime (`GATEWAY_EDGE__STREAM_MAX_S`). How many streams one key holds open is `limits.StreamCap`'s.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI

from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, SERVICE
from research_gateway.limits import TOO_MANY_STREAMS
from research_ledger import Ledger
from research_runs import run_events_router


def router(app: FastAPI) -> APIRouter:
    """The run-events route of `app`, reading through the broker's connection (per request)."""

    async def known(run_id: str) -> bool:
        """Whether the ledger holds `run_id` as a report's current run or a source-list run."""
        async with Ledger(app.state.sessions).reading(service=SERVICE) as uow:
            return await uow.reports.holds_run(run_id)

    guarded = APIRouter(
        dependencies=[Depends(require("reader"))],
        responses={**AUTH_RESPONSES, 429: TOO_MANY_STREAMS},
    )
    guarded.include_router(
        run_events_router(
            lambda: app.state.broker.connection.jetstream(),  # noqa: PLW0108 - `app.state.broker` is set and connected after the routes are built
            prefix=API,
            known=known,
            follow_s=lambda: app.state.edge.stream_max_s,
        )
    )
    return guarded
