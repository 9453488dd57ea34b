"""Counts failed API-key checks per source (an address, a presented key prefix) in a bounded window.

A source may fail `limit` key checks within `window_s` seconds; past that its failed checks are
answered 429 with `Retry-After` (`auth.py`) until the oldest of its last `limit` failures leaves
the window. Only failures are throttled: a request with a valid key is always served, so a
neighbour behind the same address (a shared host, a NAT) cannot lock a user out by sending bad
keys. Guessing a key is hopeless anyway (256-bit random keys, compared by hash).

The failures live in PostgreSQL (`auth_failures`), so every gateway replica counts the same
failures and a restart forgets nothing. A source is stored as the SHA-256 of its name (never a
presented key's characters); failures older than the window are deleted as new ones come.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.tables import AuthFailure


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class FailedAuthThrottle:
    limit: int = 20
    window_s: float = 60.0

    async def retry_after(self, session: AsyncSession, source: str) -> int | None:
        """Seconds `source` must wait before its key is checked again, or None when it may try now."""
        window = timedelta(seconds=self.window_s)
        left = await session.scalar(
            select(func.extract("epoch", AuthFailure.failed_at + window - func.now()))
            .where(
                AuthFailure.source == source_digest(source),
                AuthFailure.failed_at > func.now() - window,
            )
            .order_by(AuthFailure.failed_at.desc())
            .offset(self.limit - 1)
            .limit(1)
        )
        if left is None:
            return None
        return max(1, math.ceil(float(left)))

    async def failed(self, session: AsyncSession, source: str) -> None:
        """Count one failed key check (no key, an unknown or a revoked key) of `source`, and
        forget every failure that left the window."""
        await session.execute(
            delete(AuthFailure).where(
                AuthFailure.failed_at < func.now() - timedelta(seconds=self.window_s)
            )
        )
        await session.execute(insert(AuthFailure).values(source=source_digest(source)))
