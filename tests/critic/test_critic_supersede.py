"""Supersede is one transaction: when the second statement (new claim pending → active) fails, the first
(old claim active → superseded) is undone too, and no verdict or audit row survives."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import CriticVerdict, Verdict
from research_ledger import UnitOfWork
from research_ledger.tables import AuditEvent, CriticVerdictRow, MemoryClaim
from research_platform.db import transaction
from tests.agents.ledger import add_claim, support

pytestmark = pytest.mark.integration


async def _state(
    sessions: async_sessionmaker[AsyncSession], *ids: uuid.UUID
) -> list[tuple[str, uuid.UUID | None, list]]:
    async with sessions() as session:
        rows = [await session.get(MemoryClaim, i, populate_existing=True) for i in ids]
        return [(r.status, r.superseded_by, list(r.supersedes)) for r in rows if r is not None]


async def _rows(sessions: async_sessionmaker[AsyncSession], *ids: uuid.UUID) -> tuple[int, int]:
    async with sessions() as session:
        verdicts = len(
            list(
                await session.scalars(
                    select(CriticVerdictRow).where(CriticVerdictRow.claim_id.in_(ids))
                )
            )
        )
        audits = len(
            list(
                await session.scalars(
                    select(AuditEvent).where(
                        AuditEvent.claim_id.in_(ids), AuditEvent.service == "critic"
                    )
                )
            )
        )
    return verdicts, audits


async def test_a_failing_second_statement_leaves_both_claims_untouched(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    old = await add_claim(
        sessions, entity=unique, statement="Old claim.", supports=[support("pmid:1")]
    )
    new = await add_claim(
        sessions,
        entity=unique,
        statement="New claim.",
        status="pending",
        supports=[support("pmid:2")],
    )
    verdict = CriticVerdict(
        verdict=Verdict.supersede, score=0.9, reasoning="better supported", supersedes=[old]
    )
    trigger, function = f"fail_promotion_{unique}", f"fail_promotion_fn_{unique}"
    async with sessions() as session, session.begin():
        await session.execute(
            text(
                f"""CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.id = '{new}'::uuid AND NEW.status = 'active' THEN
                    RAISE EXCEPTION 'injected failure of the second statement';
                END IF;
                RETURN NEW;
            END $$"""
            )
        )
        await session.execute(
            text(
                f"CREATE TRIGGER {trigger} BEFORE UPDATE ON memory_claims FOR EACH ROW EXECUTE FUNCTION {function}()"
            )
        )
    try:
        with pytest.raises(DBAPIError, match="injected failure"):
            async with transaction(sessions) as session:
                await UnitOfWork(session, service="critic").verdicts.decide(new, verdict, {old})
        assert await _state(sessions, old, new) == [("active", None, []), ("pending", None, [])]
        assert await _rows(sessions, old, new) == (0, 0)
    finally:
        async with sessions() as session, session.begin():
            await session.execute(text(f"DROP TRIGGER IF EXISTS {trigger} ON memory_claims"))
            await session.execute(text(f"DROP FUNCTION IF EXISTS {function}()"))

    async with transaction(sessions) as session:
        decided = await UnitOfWork(session, service="critic").verdicts.decide(new, verdict, {old})
    assert decided is not None and decided.supersedes == [old]
    assert await _state(sessions, old, new) == [("superseded", new, []), ("active", None, [old])]
    verdicts, audits = await _rows(sessions, old, new)
    assert verdicts == 1 and audits == 2  # superseded (old) + promoted (new)
