"""The 24 h answer cache of the connector: a Postgres table keyed by the normalised request.

Why Postgres (`connector_cache`) and not a NATS KV bucket: the connector already holds a
database engine for its audit rows, entries are inspectable and purgeable with plain SQL
(`expires_at` is indexed), and a cached answer survives a NATS restart. Every replica shares
the same table, so a question asked on one replica is answered from cache on another.

Only successful answers are stored (an empty list is an answer too); a degraded source is
never cached, so the next request tries it again. Expiry is checked against an injected
clock, which lets tests move time without sleeping.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import SourceHit
from research_platform.tables import ConnectorCacheEntry

Now = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def normalise_query(query: str) -> str:
    """Case-folded, whitespace-collapsed query: `Vitamin  D` and `vitamin d` share an entry."""
    return re.sub(r"\s+", " ", query).strip().casefold()


def request_key(source: str, operation: str, **params: Any) -> tuple[str, dict[str, Any]]:
    """The cache key (sha256 hex) and the normalised request it was computed from."""
    request: dict[str, Any] = {"source": source, "operation": operation}
    for name, value in sorted(params.items()):
        if value is None:
            continue
        request[name] = (
            normalise_query(value) if name == "query" and isinstance(value, str) else value
        )
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest(), request


class AnswerCache:
    """Read and write cached source answers; `ttl_s` is how long an answer stays fresh."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        *,
        ttl_s: float = 24 * 3600,
        now: Now = _utcnow,
    ) -> None:
        self._sessions = sessions
        self._ttl = timedelta(seconds=ttl_s)
        self._now = now

    async def recall(self, key: str) -> list[SourceHit] | None:
        """The fresh answer stored under `key`, or None when there is none (or it expired)."""
        async with self._sessions() as session:
            hits = await session.scalar(
                select(ConnectorCacheEntry.hits).where(
                    ConnectorCacheEntry.key == key, ConnectorCacheEntry.expires_at > self._now()
                )
            )
        if hits is None:
            return None
        return [SourceHit.model_validate(hit) for hit in hits]

    async def remember(
        self, key: str, source: str, request: dict[str, Any], hits: list[SourceHit]
    ) -> None:
        """Store (or refresh) the answer to `request` for the next `ttl_s` seconds."""
        now = self._now()
        row = {
            "key": key,
            "source": source,
            "request": request,
            "hits": [hit.model_dump(mode="json") for hit in hits],
            "created_at": now,
            "expires_at": now + self._ttl,
        }
        statement = insert(ConnectorCacheEntry).values(**row)
        statement = statement.on_conflict_do_update(
            index_elements=[ConnectorCacheEntry.key],
            set_={
                name: statement.excluded[name]
                for name in ("hits", "request", "created_at", "expires_at")
            },
        )
        async with self._sessions() as session, session.begin():
            await session.execute(statement)

    async def purge_expired(self) -> int:
        """Delete every expired entry; returns how many went (a maintenance step)."""
        async with self._sessions() as session, session.begin():
            result = await session.execute(
                delete(ConnectorCacheEntry).where(ConnectorCacheEntry.expires_at <= self._now())
            )
        return int(cast(CursorResult[Any], result).rowcount or 0)  # a DELETE's result
