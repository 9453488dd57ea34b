"""The gateway's request-scoped dependencies: one database session per request, the broker.

Every route that touches the database declares `session: Session`; FastAPI caches the
dependency per request, so a route and its `auth.require` check share one session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

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


def bus(request: Request) -> Any:
    """The broker connected in the lifespan (a FastStream `NatsBroker`)."""
    return request.app.state.broker


Session = Annotated[AsyncSession, Depends(db_session)]
ReadSession = Annotated[AsyncSession, Depends(read_session)]
Broker = Annotated[Any, Depends(bus)]
