"""Fixtures of the researcher tests: the service in-process against the session's real NATS
and Postgres, a fake connector on the real bus, and a fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import nats
import pytest
from faststream import FastStream
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_contracts import RunResearch, subjects
from research_ledger.tables import AuditEvent, MemoryClaim
from research_platform.settings import LLMSettings
from research_researcher.main import create_app
from research_researcher.settings import ResearcherServiceSettings, ResearcherSettings
from tests.agents.apps import running as running_app
from tests.researcher.fakes import FakeConnector, FakeOpenAI

StartResearcher = Callable[..., Any]


@pytest.fixture
async def connector(nc: nats.NATS) -> AsyncIterator[FakeConnector]:
    fake = FakeConnector()
    await fake.start(nc)
    yield fake
    await fake.stop()


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.start()
    yield server
    server.stop()


def researcher_settings(
    servers: Servers, *, llm: LLMSettings | None = None, **researcher: Any
) -> ResearcherServiceSettings:
    values: dict[str, Any] = {"connector_timeout_s": 5.0, "concurrency": 2, "tier_poll_s": 0.05}
    values.update(researcher)
    return ResearcherServiceSettings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        ack_wait_s=30.0,
        max_deliver=5,
        llm=llm or LLMSettings(provider="offline"),
        researcher=ResearcherSettings(**values),
    )


@pytest.fixture
def start_researcher(servers: Servers) -> StartResearcher:
    """`async with start_researcher(llm=..., memory_timeout_s=...) as app:` runs the service in-process."""

    @asynccontextmanager
    async def running(
        *, llm: LLMSettings | None = None, **researcher: Any
    ) -> AsyncIterator[FastStream]:
        async with running_app(
            create_app(researcher_settings(servers, llm=llm, **researcher))
        ) as app:
            yield app

    return running


async def publish_task(nc: nats.NATS, task: RunResearch, *, msg_id: str | None = None) -> None:
    headers = {subjects.MSG_ID_HEADER: msg_id} if msg_id else None
    await nc.jetstream().publish(
        subjects.task_subject(task.tier.value), task.model_dump_json().encode(), headers=headers
    )


async def wait_for_claims(
    sessions: async_sessionmaker[AsyncSession], task_ids: list[uuid.UUID], *, timeout: float = 60.0
) -> list[MemoryClaim]:
    """The claims of `task_ids` once every one exists (fails after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        async with sessions() as session:
            claims = list(
                await session.scalars(select(MemoryClaim).where(MemoryClaim.task_id.in_(task_ids)))
            )
        if len(claims) >= len(task_ids) or time.monotonic() > deadline:
            assert len(claims) == len(task_ids), (
                f"{len(claims)} of {len(task_ids)} claims after {timeout}s"
            )
            return claims
        await asyncio.sleep(0.1)


async def audit_rows(
    sessions: async_sessionmaker[AsyncSession], task_id: uuid.UUID, action: str | None = None
) -> list[AuditEvent]:
    async with sessions() as session:
        stmt = select(AuditEvent).where(AuditEvent.task_id == task_id).order_by(AuditEvent.id)
        if action:
            stmt = stmt.where(AuditEvent.action == action)
        return list(await session.scalars(stmt))
