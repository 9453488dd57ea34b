"""The gateway's request-scoped dependencies: one database session per request, the broker and
its declared publishers (`bus.Bus`).

Every route that touches the database declares `session: Session`; FastAPI caches the
dependency per request, so a route and its `auth.require` check share one session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, status
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import subjects
from research_gateway.bus import Bus
from research_platform.logging import get_logger

log = get_logger(__name__)
API = "/api/research/v1"
SERVICE = "gateway"


async def db_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A session from the factory built in the lifespan, closed when the response is sent."""
    async with request.app.state.sessions() as session:
        yield session


async def read_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A session on `DATABASE_READ_URL` (the primary when unset), for GET routes that only read.

    A replica may lag a moment behind the primary, so a route that must see a write the same
    client just made (GET /tasks/{id} right after POST /tasks) keeps `Session`.
    """
    sessions = getattr(request.app.state, "read_sessions", None) or request.app.state.sessions
    async with sessions() as session:
        yield session


def broker_of(request: Request) -> Any:
    """The broker connected in the lifespan (a FastStream `NatsBroker`), for request/reply calls."""
    return request.app.state.broker


def bus_of(request: Request) -> Bus:
    """The gateway's declared publishers, on the broker connected in the lifespan."""
    return request.app.state.bus


Session = Annotated[AsyncSession, Depends(db_session)]
ReadSession = Annotated[AsyncSession, Depends(read_session)]
Broker = Annotated[Any, Depends(broker_of)]
Publishers = Annotated[Bus, Depends(bus_of)]


async def publish_or_503(
    publisher: Any,
    message: Any,
    *,
    msg_id: str,
    what: str,
    unavailable: str = "the bus is unavailable; retry",
) -> None:
    """Publish a command through its declared publisher (`bus.Bus`) with its dedup id; a bus
    failure is a 503 the client may retry."""
    try:
        await publisher.publish(message, headers={subjects.MSG_ID_HEADER: msg_id})
    except Exception as exc:
        log.error(f"{what} publish failed", msg_id=msg_id, error=repr(exc))
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, unavailable) from exc
