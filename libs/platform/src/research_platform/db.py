"""Async engine and session factory. Created in a service's lifespan, never at import."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)


def async_url(url: str) -> str:
    """Accept `postgres://`, `postgresql://` or `postgresql+psycopg://` and use asyncpg."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def create_engine(
    url: str, *, pool_size: int = 5, max_overflow: int = 5, pre_ping: bool = True
) -> AsyncEngine:
    """An asyncpg engine, sized for one service process, by default with pre-ping.

    Pre-ping costs three round trips per checkout with asyncpg (BEGIN, a ping, ROLLBACK). The
    per-message consumers (researcher, critic) turn it off: after a Postgres restart their next
    query fails instead, SQLAlchemy invalidates the pool on that disconnect, and the message is
    nacked and redelivered like any transient fault (`research_platform.delivery`).

    A service that works on N messages at once wants `pool_size` ≥ N: an overflow connection is
    closed when it is returned, so under steady load it is opened again and again — each time a
    TCP connect, authentication, an empty prepared-statement cache and asyncpg's type
    introspection (seen as a quarter of the researcher's event loop in bench:pipeline)."""
    return create_async_engine(
        async_url(url), pool_size=pool_size, max_overflow=max_overflow, pool_pre_ping=pre_ping
    )


def create_read_engine(
    read_url: str | None, primary: AsyncEngine, *, pool_size: int = 5
) -> AsyncEngine:
    """The engine for read-only queries: a streaming replica when `DATABASE_READ_URL` is set.

    Unset, it is the primary engine itself (one pool, nothing to dispose twice). Set, every
    session is opened read-only, so a write sent here by mistake fails loudly even when the
    URL names a primary instead of silently bypassing the replica split.
    """
    if not read_url:
        return primary
    return create_async_engine(
        async_url(read_url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"server_settings": {"default_transaction_read_only": "on"}},
    )


def without_transactions(engine: AsyncEngine) -> AsyncEngine:
    """`engine` (same pool) in autocommit: a session sends its statements with no BEGIN and no
    ROLLBACK around them, two round trips fewer per session, and each statement reads its own
    snapshot. For sessions that only read and need no snapshot across statements; never for
    `SET LOCAL` / `set_config(..., true)`, which would last only for their own statement."""
    return engine.execution_options(isolation_level="AUTOCOMMIT")


async def dispose(*engines: AsyncEngine) -> None:
    """Dispose each distinct engine once (the read engine may be the primary)."""
    for engine in dict.fromkeys(engines):
        await engine.dispose()


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def transaction(sessions: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """One unit of work: commits on success, rolls back on any error."""
    async with sessions() as session, session.begin():
        yield session


async def ping(sessions: async_sessionmaker[AsyncSession]) -> None:
    """Run `SELECT 1` on a session of `sessions`: raises when the database does not answer (a
    health check)."""
    async with sessions() as session:
        await session.execute(text("SELECT 1"))
