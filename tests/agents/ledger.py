"""Crafted ledger rows for the periodic-agent tests (claims and the sources they cite)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_ledger.outbox import OutboxEvent
from research_ledger.tables import MemoryClaim, ResearchSource


def support(
    source_id: str, quote: str = "the evidence sentence", title: str = ""
) -> dict[str, Any]:
    return {"source_id": source_id, "quote": quote, "title": title, "locator": "abstract"}


async def add_sources(
    sessions: async_sessionmaker[AsyncSession],
    *source_ids: str,
    year: int | None = None,
    retracted: bool = False,
    abstract: str = "",
) -> None:
    async with sessions() as session, session.begin():
        for source_id in source_ids:
            stmt = insert(ResearchSource).values(
                source_id=source_id,
                source=source_id.split(":")[0],
                title=f"title of {source_id}",
                authors=[],
                year=year,
                abstract=abstract,
                metadata={},
                retracted=retracted,
            )
            await session.execute(
                stmt.on_conflict_do_update(
                    index_elements=[ResearchSource.source_id],
                    set_={"year": year, "retracted": retracted, "abstract": abstract},
                )
            )


async def add_claim(
    sessions: async_sessionmaker[AsyncSession],
    *,
    entity: str,
    statement: str = "A claim.",
    supports: list[dict[str, Any]] | None = None,
    status: str = "active",
    confidence: float = 0.7,
    age_days: float = 0,
    decay_at: datetime | None = None,
    question: str | None = None,
) -> uuid.UUID:
    claim_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        session.add(
            MemoryClaim(
                id=claim_id,
                task_id=None,
                entity=entity,
                question=question or f"What about {entity}?",
                statement=statement,
                status=status,
                confidence=confidence,
                supports=supports or [],
                supersedes=[],
                decay_at=decay_at,
                model="test",
                dropped_supports=0,
                critic_timeouts=0,
                created_at=func.now() - timedelta(days=age_days),
            )
        )
    return claim_id


async def outbox_mark(sessions: async_sessionmaker[AsyncSession]) -> int:
    """The newest outbox row's id now: `staged` reads what was staged after it."""
    async with sessions() as session:
        return int(await session.scalar(select(func.coalesce(func.max(OutboxEvent.id), 0))) or 0)


async def staged(
    sessions: async_sessionmaker[AsyncSession], after: int, subject: str
) -> list[OutboxEvent]:
    """The outbox rows for `subject` staged after row `after`, oldest first (what a relay
    publishes, each with its `Nats-Msg-Id` `dedup_id()`)."""
    async with sessions() as session:
        rows = await session.scalars(
            select(OutboxEvent)
            .where(OutboxEvent.id > after, OutboxEvent.subject == subject)
            .order_by(OutboxEvent.id)
        )
        return list(rows)
