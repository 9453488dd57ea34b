"""Fixtures of the reviewer tests: the demo corpus in the session's real Postgres, the real
connector and reviewer services in-process on the real NATS, and helpers to wait for a review."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from faststream import FastStream
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_connector.main import create_app as create_connector
from research_connector.settings import ConnectorServiceSettings
from research_ledger import UnitOfWork
from research_ledger.tables import ReportRow
from research_platform.broker import ensure_streams
from research_platform.settings import LLMSettings
from research_reviewer.main import create_app as create_reviewer
from research_reviewer.settings import ReviewerServiceSettings, ReviewerSettings
from tests.agents.apps import running

DEMO_CORPUS = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "research_engine"
    / "demo_data"
    / "scifact_demo.jsonl"
)
TOPIC = "exercise training and quality of life in chronic heart failure"


@pytest.fixture(scope="session")
async def demo_corpus(
    sessions: async_sessionmaker[AsyncSession],
) -> async_sessionmaker[AsyncSession]:
    """The bundled SciFact excerpt, ingested once (ingest is idempotent: other suites may share it)."""
    from research_corpus.ingest import ingest_path

    await ingest_path(sessions, DEMO_CORPUS, fmt="scifact", progress=False)
    return sessions


@pytest.fixture(
    scope="package"
)  # on the shared bus: gone before the e2e stacks run (tests/conftest.py)
async def connector_service(
    servers: Servers, demo_corpus: async_sessionmaker[AsyncSession]
) -> AsyncIterator[FastStream]:
    settings = ConnectorServiceSettings(
        nats_url=servers.nats_url, database_url=servers.database_url
    )
    async with running(create_connector(settings)) as app:
        yield app


def reviewer_settings(servers: Servers, **reviewer: object) -> ReviewerServiceSettings:
    return ReviewerServiceSettings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        ack_wait_s=60.0,
        max_deliver=3,
        llm=LLMSettings(provider="offline"),
        reviewer=ReviewerSettings(sweep_interval_s=1.0, **reviewer),
    )


@pytest.fixture(
    scope="package"
)  # on the shared bus: gone before the e2e stacks run (tests/conftest.py)
async def reviewer_service(
    servers: Servers, connector_service: FastStream
) -> AsyncIterator[FastStream]:
    async with running(create_reviewer(reviewer_settings(servers))) as app:
        yield app


@pytest.fixture
async def js(nc: nats.NATS):
    context = nc.jetstream()
    await ensure_streams(context)
    return context


async def wait_for_report(
    sessions: async_sessionmaker[AsyncSession],
    review_id: uuid.UUID,
    *,
    status: tuple[str, ...] = ("completed", "failed"),
    timeout: float = 240.0,
) -> ReportRow:
    """The report once it reaches one of `status` (fails after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        async with sessions() as session:
            row = await UnitOfWork(session, service="test").reports.get(review_id)
        if row is not None and row.status in status:
            return row
        assert time.monotonic() < deadline, (
            f"report {review_id} is {row.status if row else 'absent'} after {timeout}s"
        )
        await asyncio.sleep(0.2)
