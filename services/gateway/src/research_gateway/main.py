"""Gateway service: the HTTP API (FastAPI). Publishes tasks to the bus, reads the ledger.

Routes live under `/api/research/v1`; the OpenAPI document is at `/openapi.json`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Literal

import uvicorn
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request, status
from prometheus_client import Counter, make_asgi_app
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import EvidenceFound, RunResearch, SearchEvidence, subjects
from research_gateway.admin import router as admin_router
from research_gateway.ledger import router as ledger_router
from research_gateway.repository import SERVICE, TaskDesk
from research_gateway.schemas import ClaimView, SearchResults, TaskAccepted, TaskSubmission, TaskView
from research_platform.broker import ensure_streams_at, make_broker
from research_platform.db import create_engine, session_factory
from research_platform.logging import configure_logging, get_logger
from research_platform.settings import Settings, get_settings

log = get_logger(__name__)
TASKS_SUBMITTED = Counter("research_tasks_submitted_total", "Tasks accepted over HTTP", ["tier"])
API = "/api/research/v1"


async def db_session(request: Request) -> AsyncIterator[AsyncSession]:
    async with request.app.state.sessions() as session:
        yield session


Session = Annotated[AsyncSession, Depends(db_session)]
router = APIRouter(prefix=API)


@router.post("/tasks", status_code=status.HTTP_202_ACCEPTED, response_model=TaskAccepted)
async def submit_task(body: TaskSubmission, request: Request, session: Session) -> TaskAccepted:
    """Accept a research question; the pipeline answers asynchronously (poll the task)."""
    task = RunResearch(**body.model_dump(), origin="api")
    async with session.begin():
        await TaskDesk(session).submit(task)
    try:
        await request.app.state.broker.publish(
            task,
            subjects.task_subject(task.tier.value),
            stream=subjects.TASKS_STREAM,
            headers={subjects.MSG_ID_HEADER: f"task-{task.task_id}"},
        )
    except Exception as exc:
        log.error("task publish failed", task_id=str(task.task_id), error=repr(exc))
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, "the task bus is unavailable; retry") from exc
    TASKS_SUBMITTED.labels(task.tier.value).inc()
    return TaskAccepted(task_id=task.task_id)


@router.get("/tasks/{task_id}", response_model=TaskView)
async def get_task(task_id: uuid.UUID, session: Session) -> TaskView:
    view = await TaskDesk(session).task(task_id)
    if view is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no task {task_id}")
    return view


@router.get("/claims/{claim_id}", response_model=ClaimView)
async def get_claim(claim_id: uuid.UUID, session: Session) -> ClaimView:
    view = await TaskDesk(session).claim(claim_id)
    if view is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no claim {claim_id}")
    return view


@router.get("/search", response_model=SearchResults)
async def search_corpus(
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=1000)],
    k: Annotated[int, Query(ge=1, le=200)] = 10,
    mode: Literal["hybrid", "lexical", "dense"] = "hybrid",
) -> SearchResults:
    """Hybrid / lexical / dense search over the local corpus (served by the connector's `corpus` source)."""
    ask = SearchEvidence(query=q, sources=["corpus"], limit=k, mode=mode)
    try:
        reply = await request.app.state.broker.request(ask, subjects.CONNECTOR_SEARCH, timeout=15.0)
    except TimeoutError as exc:
        raise HTTPException(status.HTTP_504_GATEWAY_TIMEOUT, "the connector service did not answer") from exc
    found = EvidenceFound.model_validate_json(reply.body)
    if found.error:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, found.error)
    if "corpus" in found.degraded:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, f"corpus search failed: {found.degraded['corpus']}")
    return SearchResults(query=q, mode=mode, hits=found.hits)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await ensure_streams_at(settings.require_nats_url())
        engine = create_engine(settings.require_database_url())
        broker = make_broker(settings.require_nats_url(), SERVICE)
        await broker.connect()
        app.state.sessions, app.state.broker = session_factory(engine), broker
        yield
        await broker.stop()
        await engine.dispose()

    app = FastAPI(title="research-engine", version="0.1.0", lifespan=lifespan)
    app.include_router(router)
    app.include_router(ledger_router)
    app.include_router(admin_router)
    app.mount("/metrics", make_asgi_app())

    @app.get("/healthz")
    async def healthz(request: Request) -> dict[str, str]:
        async with request.app.state.sessions() as session:
            await session.execute(text("SELECT 1"))
        return {"status": "ok"}

    return app


def run() -> None:
    settings = get_settings()
    configure_logging(SERVICE, settings.log_level, settings.log_json)
    uvicorn.run(create_app(settings), host=settings.gateway_host, port=settings.gateway_port, log_level="warning")


if __name__ == "__main__":
    run()
