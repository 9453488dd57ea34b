"""Counts failed API-key checks per source (an address, a presented key prefix) in a bounded window.

A source may fail `limit` key checks within `window_s` seconds; past that its failed checks are
answered 429 with `Retry-After` (`auth.py`) until the oldest of its last `limit` failures leaves
the window. Only failures are throttled: a request with a valid key is always served, so a
neighbour behind the same address (a shared host, a NAT) cannot lock a user out by sending bad
keys. Guessing a key is hopeless anyway (256-bit random keys, compared by hash).

The failures live in PostgreSQL (`auth_failures`, through `uow.signins`), so every gateway
replica counts the same failures and a restart forgets nothing. A source is stored as the SHA-256
of its name (never a presented key's characters); failures older than the window are deleted as
new ones come.
"""

from __future__ import annotations

from dataclasses import dataclass

from research_ledger import UnitOfWork


@dataclass(frozen=True)
class FailedAuthThrottle:
    """The limit of failed key checks per source and its window (`uow.signins` counts them)."""

    limit: int = 20
    window_s: float = 60.0

    async def retry_after(self, uow: UnitOfWork, source: str) -> int | None:
        """Seconds `source` must wait before its key is checked again, or None when it may try now."""
        return await uow.signins.failure_wait(source, limit=self.limit, window_s=self.window_s)

    async def failed(self, uow: UnitOfWork, source: str) -> None:
        """Count one failed key check (no key, an unknown or a revoked key) of `source`, and
        forget every failure that left the window."""
        await uow.signins.count_failure(source, window_s=self.window_s)
