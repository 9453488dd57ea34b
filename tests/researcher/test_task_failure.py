"""A task the researcher cannot answer ends `failed` with the reason, visible in `GET /tasks/{id}`."""

from __future__ import annotations

import asyncio

import httpx
import nats
import pytest
from pydantic import SecretStr

from research_contracts import RunResearch, Tier
from research_gateway.main import create_app as create_gateway
from research_ledger import AuditAction, TaskStatus
from research_llm import LlmPolicy, ProviderChain, build_chain
from research_platform.settings import LLMSettings, Settings
from tests.researcher.conftest import audit_rows, publish_task
from tests.researcher.fakes import FakeConnector, FakeOpenAI

pytestmark = pytest.mark.integration
API = "/api/research/v1"


async def test_no_provider_answering_fails_the_task_with_the_reason(
    servers,
    start_researcher,
    connector: FakeConnector,
    openai_server: FakeOpenAI,
    nc: nats.NATS,
    sessions,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
    api_keys,
) -> None:
    # An operator chain without the offline engine: the remote model (HTTP 500 every time) is the only link.
    def remote_only(policy: LlmPolicy, **_: object) -> ProviderChain:
        return ProviderChain(build_chain(policy.settings).providers[:-1])

    monkeypatch.setattr(LlmPolicy, "chain", remote_only)
    llm = LLMSettings(
        provider="openai",
        openai_api_key=SecretStr("sk-test"),
        openai_base_url=openai_server.base_url,
        openai_model="gpt-test",
        timeout_s=0.5,
    )
    task = RunResearch(
        question="Does denosumab reduce vertebral fractures?",
        entity=f"fail {unique}",
        tier=Tier.priority,
    )
    async with start_researcher(llm=llm):
        await publish_task(nc, task)
        for _ in range(600):
            if await audit_rows(sessions, task.task_id, AuditAction.TASK_FAILED.value):
                break
            await asyncio.sleep(0.1)

    [failed] = await audit_rows(sessions, task.task_id, AuditAction.TASK_FAILED.value)
    assert failed.payload["previous_status"] == TaskStatus.researching
    app = create_gateway(Settings(nats_url=servers.nats_url, database_url=servers.database_url))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://localhost",
            headers=api_keys["reader"],
        ) as client,
    ):
        view = (await client.get(f"{API}/tasks/{task.task_id}")).json()
    assert view["status"] == "failed" and view["error"].startswith("no LLM provider answered")
    assert view["claim"] is None
