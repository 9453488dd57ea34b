"""`without_transactions`: sessions that only read send no BEGIN / ROLLBACK (each statement is
its own transaction), while the engine's other sessions keep their transactions."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from research_platform.db import create_engine, session_factory, transaction, without_transactions

pytestmark = pytest.mark.integration

TWO_IDS = "SELECT txid_current()"


async def two_transaction_ids(sessions) -> tuple[int, int]:
    async with sessions() as session:
        first = await session.scalar(text(TWO_IDS))
        second = await session.scalar(text(TWO_IDS))
    return first, second


async def test_a_reading_session_runs_each_statement_on_its_own(servers):
    engine = create_engine(
        servers.database_url, pool_size=1, max_overflow=0
    )  # one connection for both views
    try:
        reads = session_factory(without_transactions(engine))
        first, second = await two_transaction_ids(reads)
        assert first != second  # no BEGIN: every statement was its own transaction

        # The same pooled connection, handed back by the reading session, runs transactions again.
        plain = session_factory(engine)
        first, second = await two_transaction_ids(plain)
        assert first == second
        async with transaction(plain) as session:
            assert await session.scalar(text(TWO_IDS)) == await session.scalar(text(TWO_IDS))
        first, second = await two_transaction_ids(reads)
        assert first != second
    finally:
        await engine.dispose()
