"""The gateway's request-scoped dependencies: the ledger's door (`research_ledger.Ledger`), a
unit of work for reading, the broker and its declared publishers (`bus.Bus`).

A route reaches the ledger only through a unit of work: `uow: Reading` (a GET that only reads,
on the read replica when one is configured), `uow: Current` (a read that must see a write the
same client just made, on the primary), or `ledger: LedgerDoor` and
`async with ledger.unit_of_work(service=SERVICE) as uow:` around each transaction that writes
(committed when the block ends, so the answer is sent after the commit).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Request, status

from research_contracts import subjects
from research_gateway.bus import Bus
from research_ledger import Ledger, UnitOfWork
from research_platform.logging import get_logger

log = get_logger(__name__)
API = "/api/research/v1"
SERVICE = "gateway"
T = TypeVar("T")


def ledger_of(request: Request) -> Ledger:
    """The ledger over the session factories built in the lifespan (`app.state.sessions`, and
    `app.state.read_sessions` on `DATABASE_READ_URL` when set)."""
    state = request.app.state
    return Ledger(state.sessions, read_sessions=getattr(state, "read_sessions", None))


async def reading(request: Request) -> AsyncIterator[UnitOfWork]:
    """A unit of work that only reads, on `DATABASE_READ_URL` (the primary when unset).

    A replica may lag a moment behind the primary, so a route that must see a write the same
    client just made (GET /tasks/{id} right after POST /tasks) takes `Current`.
    """
    async with ledger_of(request).reading(service=SERVICE) as uow:
        yield uow


async def current(request: Request) -> AsyncIterator[UnitOfWork]:
    """A unit of work that only reads, on the primary: it sees every committed write."""
    async with Ledger(request.app.state.sessions).reading(service=SERVICE) as uow:
        yield uow


def broker_of(request: Request) -> Any:
    """The broker connected in the lifespan (a FastStream `NatsBroker`), for request/reply calls."""
    return request.app.state.broker


def bus_of(request: Request) -> Bus:
    """The gateway's declared publishers, on the broker connected in the lifespan."""
    bus: Bus = request.app.state.bus
    return bus


LedgerDoor = Annotated[Ledger, Depends(ledger_of)]
Reading = Annotated[UnitOfWork, Depends(reading)]
Current = Annotated[UnitOfWork, Depends(current)]
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


def or_404(found: T | None, detail: str) -> T:
    """`found`, or a 404 with `detail` when the ledger holds no such thing."""
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail)
    return found
