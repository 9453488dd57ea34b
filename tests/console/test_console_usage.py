"""The model's usage where the console shows a run, in a real browser: a run's `llm.usage` trace step
(research_modes.mode_run) as a line of calls, tokens in / out, cost, seconds and models, with the
spent budget and each answer the offline engine gave instead; a report's `llm_usage` metadata in
its header. The run and the report are written the way the services write them (RunRecorder,
research_ledger); the llm tier (tests/llm_real/test_stack.py) produces the same records with a real
model."""

from __future__ import annotations

import re
import uuid
from typing import Any

import nats
import pytest
from playwright.async_api import expect

from research_contracts.runs import AgentStarted
from research_engine.stack import Stack
from research_ledger import UnitOfWork
from research_runs import RunRecorder
from tests.console.conftest import shot
from tests.keys import api_key
from tests.reports.sample import review

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

USAGE = {
    "calls": 3,
    "tokens_in": 2710,
    "tokens_out": 388,
    "cost_usd": 0.0,
    "seconds": 41.2,
    "models": {"openai:SmolLM2-135M-Instruct": 3},
    "budget": {"seconds": 60.0, "tokens": None, "usd": None},
    "budget_spent": "run budget spent (61.3s of 60s model time)",
    "fallbacks": [
        {
            "question": "verification_labels",
            "reasons": ["openai: run budget spent (61.3s of 60s model time)"],
        }
    ],
}
LINE = "Model usage: 3 model calls · 2,710 tokens in / 388 out · $0.0000 · 41.2 s · openai:SmolLM2-135M-Instruct"


async def test_a_runs_trace_shows_its_model_usage_budget_and_fallbacks(
    open_console: Any, console_stack: Stack, nc: nats.NATS
) -> None:
    run_id = f"console-usage-{uuid.uuid4().hex[:8]}"
    recorder = RunRecorder(nc.jetstream(), run_id, agent="verifier")
    async with recorder.running():
        await recorder.emit(AgentStarted(run_id=run_id, agent="verifier"))
        async with recorder.tool("llm.usage", {"budget": USAGE["budget"]}) as call:
            call.result = USAGE
    page = await open_console(console_stack.admin_key)
    await page.goto(f"{console_stack.gateway_url}/run/{run_id}")
    await expect(page.locator("#run-status")).to_have_text("completed")
    used = page.locator("#trace li.usage")
    await expect(used.locator(".usage-line")).to_have_text(LINE)
    await expect(used.locator(".warn")).to_contain_text(
        "run budget spent (61.3s of 60s model time)"
    )
    await used.get_by_text("1 answer from the offline engine instead of the model").click()
    await expect(used.locator("ul.fallbacks li")).to_have_text(
        "verification_labels: offline engine — openai: run budget spent (61.3s of 60s model time)"
    )
    await shot(page, "run-llm-usage")


async def test_a_reports_header_shows_the_model_usage_of_its_rounds(
    open_console: Any, console_stack: Stack, sessions: Any
) -> None:
    report_id = uuid.uuid4()
    content = review()
    content.metadata["llm_usage"] = {
        key: USAGE[key]
        for key in ("calls", "tokens_in", "tokens_out", "cost_usd", "seconds", "models")
    }
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        await ledger.reports.open(
            report_id,
            kind="review",
            run_id=f"rv-{report_id.hex[:12]}",
            subject="usage",
            subject_key="usage",
        )
        await ledger.reports.save_version(
            report_id,
            run_id=f"rv-{report_id.hex[:12]}",
            content=content.model_dump(mode="json"),
            markdown="# Review",
            claim_ids=[],
        )
        await ledger.reports.complete(report_id)
    page = await open_console(await api_key(sessions, "reader"))
    await page.goto(f"{console_stack.gateway_url}/report/{report_id}")
    await expect(page.locator("#result .report-head .usage-line")).to_have_text(LINE)
    await expect(page.locator("#result .report-head")).not_to_contain_text(
        re.compile("offline engine instead")
    )
    await shot(page, "report-llm-usage")
