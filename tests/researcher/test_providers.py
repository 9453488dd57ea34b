"""Provider failures inside the service: a remote model that fails (429, 5xx, timeout, invalid
output twice) hands over to the offline engine, and every failure is an audit row in the same
transaction as the claim, which names the provider and model that did answer."""

from __future__ import annotations

import nats
import pytest
from pydantic import SecretStr

from research_contracts import RunResearch, Tier
from research_platform.settings import LLMSettings
from tests.researcher.conftest import audit_rows, publish_task, wait_for_claims
from tests.researcher.fakes import FakeConnector, FakeOpenAI, Reply

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ([Reply(status=429)], "HTTP 429"),
        ([Reply(status=503)], "HTTP 503"),
        (
            [Reply(text="not json at all"), Reply(text='{"statement": "no supports field"}')],
            "invalid after one retry",
        ),
        ([Reply(text="{}", delay_s=1.5)], "timeout"),
    ],
    ids=["429", "503", "invalid-twice", "timeout"],
)
async def test_a_failing_remote_model_falls_back_to_offline_and_is_audited(
    replies: list[Reply],
    reason: str,
    start_researcher,
    connector: FakeConnector,
    openai_server: FakeOpenAI,
    nc: nats.NATS,
    sessions,
    unique: str,
) -> None:
    openai_server.queue(*replies)
    llm = LLMSettings(
        provider="openai",
        openai_api_key=SecretStr("sk-test"),
        openai_base_url=openai_server.base_url,
        openai_model="gpt-test",
        timeout_s=0.5,
    )
    task = RunResearch(
        question="Does denosumab reduce vertebral fractures?",
        entity=f"providers {unique}",
        tier=Tier.priority,
    )
    async with start_researcher(llm=llm):
        await publish_task(nc, task)
        [claim] = await wait_for_claims(sessions, [task.task_id])

    assert claim.model == "offline:offline-extractive-v1" and claim.supports
    [failed] = await audit_rows(sessions, task.task_id, "research.llm.provider_failed")
    assert failed.claim_id == claim.id and failed.service == "researcher"
    assert failed.payload["provider"] == "openai" and failed.payload["model"] == "gpt-test"
    assert reason in failed.payload["reason"]
    [proposed] = await audit_rows(sessions, task.task_id, "research.claim.proposed")
    assert proposed.payload["provider"] == "offline"
    assert len(openai_server.bodies) == len(
        replies
    )  # no client-side retries beyond the one corrective ask
