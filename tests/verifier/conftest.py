"""Fixtures of the verifier tests: a crafted corpus answering the connector's `search_papers` over
the real NATS (so the evidence each test needs is exactly what the searches find), the verifier
service in-process on the real NATS + Postgres, and helpers to wait for a verification."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import nats
import pytest
from faststream import FastStream
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.servers import Servers
from research_contracts import subjects
from research_contracts.corpus_tools import CorpusToolReply, SearchPapers
from research_ledger import UnitOfWork
from research_ledger.tables import ReportRow
from research_platform.broker import ensure_streams
from research_platform.settings import LLMSettings
from research_verifier.main import create_app
from research_verifier.settings import VerifierServiceSettings, VerifierSettings
from tests.agents.apps import running
from tests.llm.fake_llm_server import FakeLLMServer
from tests.teardown import stopped


@dataclass
class CraftedCorpus:
    """Papers by claim keyword: a search whose query holds `key` finds `papers[key]` (each a dict
    of paper_id/title/passage). Every query of a claim finds the same papers, so a test controls
    the evidence completely; the searches seen are recorded."""

    papers: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)

    def answer(self, query: str) -> list[dict[str, object]]:
        self.queries.append(query)
        found = []
        for key, papers in self.papers.items():
            if key.lower() in query.lower():
                found += papers
        return [
            {
                "paper_id": p["paper_id"],
                "title": p["title"],
                "authors": ["A. Author"],
                "year": 2020,
                "score": 1.0,
                "passage": p["passage"],
                "locator": "abstract",
            }
            for p in found
        ]


@pytest.fixture(
    scope="package"
)  # on the shared bus: gone before the e2e stacks run (tests/conftest.py)
async def crafted(servers: Servers) -> AsyncIterator[CraftedCorpus]:
    corpus = CraftedCorpus()
    nc = await nats.connect(servers.nats_url)

    async def on_search(msg) -> None:
        request = SearchPapers.model_validate_json(msg.data)
        reply = CorpusToolReply(tool="search_papers", result=corpus.answer(request.query))
        await msg.respond(reply.model_dump_json().encode())

    sub = await nc.subscribe(subjects.corpus_tool_subject("search_papers"), cb=on_search)
    yield corpus
    await sub.unsubscribe()
    await stopped(nc.close(), "crafted corpus connection")


def verifier_settings(servers: Servers, llm: LLMSettings | None = None) -> VerifierServiceSettings:
    """The service these tests run: with an LLM configured it labels the passages itself (`label`),
    so each test scripts the evidence; the veto role (`check`) is tested in test_veto.py."""
    return VerifierServiceSettings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        ack_wait_s=60.0,
        max_deliver=3,
        llm=llm or LLMSettings(provider="offline"),
        verifier=VerifierSettings(tool_timeout_s=10.0, llm_role="label"),
    )


@pytest.fixture(scope="session")
def llm_server() -> Iterator[FakeLLMServer]:
    """The OpenAI wire protocol on a local port. With nothing queued it answers 500, so the verifier
    falls back to the offline classifier: one service covers both engines (one durable consumer)."""
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(
    scope="package"
)  # on the shared bus: gone before the e2e stacks run (tests/conftest.py)
async def verifier_service(
    servers: Servers, crafted: CraftedCorpus, llm_server: FakeLLMServer
) -> AsyncIterator[FastStream]:
    llm = LLMSettings(
        provider="openai",
        openai_api_key="sk-test",
        openai_base_url=llm_server.openai_url,
        openai_model="m1",
        timeout_s=10,
    )
    async with running(create_app(verifier_settings(servers, llm))) as app:
        yield app


@pytest.fixture
async def js(nc: nats.NATS):
    context = nc.jetstream()
    await ensure_streams(context)
    return context


async def wait_for_report(
    sessions: async_sessionmaker[AsyncSession],
    verification_id: uuid.UUID,
    *,
    status: tuple[str, ...] = ("completed", "failed"),
    version: int = 1,
    timeout: float = 120.0,
) -> ReportRow:
    """The report once it reaches one of `status` with at least `version` (fails after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        async with sessions() as session:
            row = await UnitOfWork(session, service="test").reports.get(verification_id)
        if (
            row is not None
            and row.status in status
            and (row.status == "failed" or row.current_version >= version)
        ):
            return row
        assert time.monotonic() < deadline, (
            f"verification {verification_id} did not finish: {row and row.status}"
        )
        await asyncio.sleep(0.2)


def dumps(value: object) -> str:
    return json.dumps(value)
