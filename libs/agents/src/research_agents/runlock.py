"""The run-lock of a periodic agent: a PostgreSQL session-level advisory lock.

Every replica of an agent asks for the same lock before a run, so scaling an agent out never
runs two of its ticks at once. The lock lives on one dedicated connection for the whole run
and disappears with it, so a crashed replica never leaves it behind.

The two-int form `pg_try_advisory_lock(int4, int4)` is used: its key space does not overlap
the single-bigint locks other services take (`pg_advisory_xact_lock(hashtext(entity))`).
"""

from __future__ import annotations

import zlib

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

# "REAG": the namespace of research-engine agent run-locks (first int4 of the key).
LOCK_NAMESPACE = 0x52454147


def lock_key(agent: str) -> int:
    """The second int4 of the key: a stable, non-negative hash of the agent name."""
    return zlib.crc32(f"research-agent:{agent}".encode()) & 0x7FFFFFFF


class RunLock:
    """Holds the agent's advisory lock on a dedicated connection between `acquire` and `release`."""

    def __init__(self, engine: AsyncEngine, agent: str) -> None:
        self.engine = engine
        self.agent = agent
        self.key = lock_key(agent)
        self._conn: AsyncConnection | None = None

    @property
    def held(self) -> bool:
        return self._conn is not None

    async def acquire(self) -> bool:
        """Take the lock if nobody holds it; False when another run (any replica) has it."""
        if self._conn is not None:
            return False
        conn = await self.engine.connect()
        try:
            got = await conn.scalar(
                text("SELECT pg_try_advisory_lock(:ns, :key)"),
                {"ns": LOCK_NAMESPACE, "key": self.key},
            )
            await conn.commit()  # the lock is session-level: it outlives this transaction
        except BaseException:
            await conn.close()
            raise
        if not got:
            await conn.close()
            return False
        self._conn = conn
        return True

    async def release(self) -> None:
        """Give the lock back (closing the connection would also release it)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            await conn.execute(
                text("SELECT pg_advisory_unlock(:ns, :key)"),
                {"ns": LOCK_NAMESPACE, "key": self.key},
            )
            await conn.commit()
        finally:
            await conn.close()


async def lock_is_held(session: AsyncSession, agent: str) -> bool:
    """Whether any session (any replica) holds `agent`'s run-lock right now."""
    held = await session.scalar(
        text(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND classid = CAST(:ns AS oid) AND objid = CAST(:key AS oid) AND objsubid = 2)"
        ),
        {"ns": LOCK_NAMESPACE, "key": lock_key(agent)},
    )
    return bool(held)
