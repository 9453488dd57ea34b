"""The provenance of the ledger's active claims (`uow.provenance`): one set-based statement
assesses a whole batch, the librarian's walk.

`assess` resolves every `supports[]` entry of up to `batch_size` active claims against
`research_sources`, checks `decay_at`, and brings the claims' open findings of the unit of
work's agent along — one round trip per batch, never a query per claim. Only the claims that may
need a change come back (a missing or absent support, decay inside the window, or an open
finding) together with how many claims the batch covered and where it ended: a healthy,
unflagged claim has nothing to triage, and at 98 % of a ledger, shipping and parsing those rows
was most of a pass's time.

A walk over the whole ledger holds one unit of work (`Ledger.reading` over autocommit sessions)
and calls `prepare_walk` once: the assessment then runs as an asyncpg prepared statement on the
session's connection, skipping SQL compilation and result processing per batch (a fifth of the
time per batch of 100 on this machine), with a generic plan (`plan_generically`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

ASSESS_BATCH = text(
    """
WITH batch AS MATERIALIZED (  -- keyset walk in creation (≈ physical) order: sequential heap reads
    SELECT c.id, c.created_at, c.supports, c.decay_at
    FROM memory_claims c
    WHERE c.status = 'active' AND (c.created_at, c.id) > (:after_created, :after_id)
    ORDER BY c.created_at, c.id
    LIMIT :batch_size
),
assessed AS (
    SELECT b.id,
           b.created_at,
           cited.supports,
           cited.missing,
           b.decay_at,
           (b.decay_at IS NOT NULL AND b.decay_at <= now() + make_interval(days => :decay_days)) AS decaying,
           flagged.open
    FROM batch b
    CROSS JOIN LATERAL (
        SELECT count(*) AS supports,
               array_agg(coalesce(s.value ->> 'source_id', '')) FILTER (
                   WHERE NOT EXISTS (SELECT 1 FROM research_sources r WHERE r.source_id = s.value ->> 'source_id')
               ) AS missing
        FROM jsonb_array_elements(CASE jsonb_typeof(b.supports) WHEN 'array' THEN b.supports ELSE '[]'::jsonb END) AS s
    ) AS cited
    CROSS JOIN LATERAL (  -- one GIN probe per claim: the cost per claim stays flat at any batch size
        SELECT jsonb_agg(jsonb_build_object('id', o.id, 'kind', o.kind)) AS open
        FROM findings o
        WHERE o.claim_ids @> ARRAY[b.id] AND o.agent = :agent AND o.resolved_at IS NULL AND o.expires_at > now()
    ) AS flagged
),
walked AS (  -- how far the batch went, so the walk can go on without reading every healthy row
    SELECT (SELECT count(*) FROM batch) AS seen, l.created_at AS last_created, l.id AS last_id
    FROM (SELECT created_at, id FROM batch ORDER BY created_at DESC, id DESC LIMIT 1) l
)
SELECT a.id, a.created_at, a.supports, a.missing, a.decay_at, a.decaying, a.open,
       w.seen, w.last_created, w.last_id
FROM walked w
LEFT JOIN assessed a
       ON a.supports = 0 OR a.missing IS NOT NULL OR a.decaying OR a.open IS NOT NULL
ORDER BY a.created_at, a.id
"""
)

Cursor = tuple[datetime, uuid.UUID]
START: Cursor = (datetime(1970, 1, 1, tzinfo=UTC), uuid.UUID(int=0))


ASSESS_PARAMS = ("after_created", "after_id", "batch_size", "decay_days", "agent")


@dataclass(frozen=True)
class Assessment:
    """One batch: claims covered (`seen`), the last one (the cursor), the rows that may need a change."""

    seen: int
    last: Cursor
    rows: list[Mapping[str, Any]]

    @classmethod
    def of(cls, rows: list[Mapping[str, Any]]) -> Assessment:
        if not rows:
            return cls(0, START, [])
        head = rows[0]
        return cls(
            int(head["seen"]),
            (head["last_created"], head["last_id"]),
            [r for r in rows if r["id"] is not None],
        )


def positional(sql: str, names: tuple[str, ...]) -> str:
    """`sql` with `:name` parameters as asyncpg's `$n` placeholders."""
    for n, name in enumerate(names, 1):
        sql = sql.replace(f":{name}", f"${n}")
    return sql


class Provenance:
    """Assessments of the active claims' provenance in the unit of work's session; the open
    findings considered are `agent`'s (the unit of work's service)."""

    def __init__(self, session: AsyncSession, *, agent: str) -> None:
        self.session = session
        self.agent = agent
        self.prepared: Any | None = None

    async def plan_generically(self, generic: bool = True) -> None:
        """Plan this connection's prepared statements once, generically (`plan_cache_mode`), or
        as Postgres does by default again (`generic=False`, before the connection goes back)."""
        if generic:
            await self.session.execute(text("SET plan_cache_mode = force_generic_plan"))
        else:
            await self.session.execute(text("RESET plan_cache_mode"))

    async def prepare_walk(self) -> Any:
        """Prepare the assessment on the session's connection (uses its JSON codecs); reuse it per batch."""
        connection = await self.session.connection()
        raw = await connection.get_raw_connection()
        driver = raw.driver_connection
        assert driver is not None  # the session's open connection: asyncpg's, not detached
        self.prepared = await driver.prepare(positional(ASSESS_BATCH.text, ASSESS_PARAMS))
        return self.prepared

    async def analyze_findings(self) -> None:
        """Refresh the planner's statistics of `findings` (after a walk wrote some)."""
        await self.session.execute(text("ANALYZE findings"))

    async def assess(self, after: Cursor, batch_size: int, decay_days: int) -> Assessment:
        """The next `batch_size` active claims after `after` (creation time, id): how many, where the
        batch ended, and the rows of those that may need a change (see module doc)."""
        if self.prepared is not None:
            return Assessment.of(
                list(
                    await self.prepared.fetch(
                        after[0], after[1], batch_size, decay_days, self.agent
                    )
                )
            )
        rows = await self.session.execute(
            ASSESS_BATCH,
            {
                "after_created": after[0],
                "after_id": after[1],
                "batch_size": batch_size,
                "decay_days": decay_days,
                "agent": self.agent,
            },
        )
        # RowMapping's keys are column names (it also takes Column objects)
        return Assessment.of(cast(list[Mapping[str, Any]], list(rows.mappings())))
