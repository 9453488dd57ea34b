"""A mode's run (`research_modes.mode_run`: a review, a verification, a source list) is an LLM run:
its trace ends with one `llm.usage` step — calls, tokens, cost, the budget and each answer the
offline engine gave instead, with why — and the chain's per-run budget holds across the run's
questions. An offline run's trace has no such step. Real NATS JetStream (the run events)."""

from __future__ import annotations

import json
import uuid

import pytest
from pydantic import SecretStr

from research_contracts.runs import RunDone, ToolReturned
from research_ledger import Ledger
from research_llm import EvidenceDoc, build_chain
from research_modes import mode_run
from research_platform.settings import LLMSettings
from research_runs import replay
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer

pytestmark = pytest.mark.integration

EVIDENCE = [
    EvidenceDoc(
        source_id="corpus:1", title="Vitamin D", text="Vitamin D supplementation reduced fractures."
    )
]
DRAFT = {
    "statement": "Vitamin D reduces fractures.",
    "entity": "vitamin D",
    "confidence": 0.7,
    "supports": [
        {
            "source_id": "corpus:1",
            "quote": "Vitamin D supplementation reduced fractures.",
            "locator": None,
        }
    ],
}


async def _events(js, run_id: str) -> list:
    return [event async for _, event in replay(js, run_id)]


async def test_a_mode_run_that_asked_a_model_ends_its_trace_with_its_usage_and_fallbacks(
    nc, sessions, llm_server: FakeLLMServer
) -> None:
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(DRAFT))
    chain = build_chain(
        LLMSettings(
            provider="openai",
            openai_api_key=SecretStr(""),
            openai_base_url=llm_server.openai_url,
            openai_model="gpt-4o",
            timeout_s=5.0,
            run_budget_tokens=2,
        ),
        encoder=None,
    )
    run_id = f"usage-{uuid.uuid4().hex[:8]}"
    async with mode_run(
        nc.jetstream(),
        Ledger(sessions),
        service="verifier",
        kind="verification",
        report_id=uuid.uuid4(),
        run_id=run_id,
    ) as run:
        first = await chain.draft_claim("Vitamin D?", None, EVIDENCE)
        second = await chain.draft_claim("Vitamin D?", None, EVIDENCE)
    assert (first.provider, second.provider) == ("openai", "offline")
    assert run.failed is None and run.llm.usage.calls == 1
    events = await _events(nc.jetstream(), run_id)
    [step] = [e for e in events if isinstance(e, ToolReturned) and e.tool_id == "llm.usage"]
    assert (
        step.results["calls"] == 1
        and step.results["tokens_in"] == 1
        and step.results["tokens_out"] == 1
    )
    assert step.results["cost_usd"] == pytest.approx((2.50 + 10.00) / 1_000_000)
    assert step.results["models"] == {"openai:gpt-4o": 1}
    assert step.results["budget"] == {"seconds": None, "tokens": 2, "usd": None}
    assert step.results["budget_spent"] == "run budget spent (2 of 2 tokens)"
    assert step.results["fallbacks"] == [
        {"question": "claim_draft", "reasons": ["openai: run budget spent (2 of 2 tokens)"]}
    ]
    assert isinstance(events[-1], RunDone) and events[-1].status == "completed"


async def test_an_offline_run_records_no_usage_step(nc, sessions) -> None:
    chain = build_chain(LLMSettings(provider="offline"), encoder=None)
    run_id = f"usage-{uuid.uuid4().hex[:8]}"
    async with mode_run(
        nc.jetstream(),
        Ledger(sessions),
        service="verifier",
        kind="verification",
        report_id=uuid.uuid4(),
        run_id=run_id,
    ):
        assert (await chain.draft_claim("Vitamin D?", None, EVIDENCE)).provider == "offline"
    events = await _events(nc.jetstream(), run_id)
    assert not [e for e in events if isinstance(e, ToolReturned)]
    assert isinstance(events[-1], RunDone)
