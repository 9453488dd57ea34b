"""A user's three requests through the real services against the real llama-server: a question
(researcher drafting → critic), a claim verification and a source list, each submitted over the
gateway's HTTP API to the services running as processes on the real bus and database (the demo
corpus), with `LLM__PROVIDER=openai` pointed at llama-server + SmolLM2-135M (one thread).

What a 135M model writes is mostly unusable, so nothing here asserts what it says. Each test
asserts what the user gets: an answer built from the model's usable parts, or the offline engine's
with the reason visible (the claim's provider failures in the audit log; the run's `llm.usage`
trace step listing each fallback) — never a crash, a hang, an invented citation. The model's
usage is counted (tokens in / out, cost 0 for a local model) and every run is bounded by the
per-run budget (`LLM__RUN_BUDGET_S`), which also keeps this module's wall time bounded.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bench.harness.llama_server import MODEL_NAME, LlamaServer
from bench.harness.servers import Servers
from bench.harness.stack import ingest_demo_corpus
from research_contracts.runs import ToolReturned
from research_engine.stack import Stack
from research_platform.embedded import free_port
from research_reports import Report, check_report
from research_reports.text import found_verbatim
from research_runs import replay

pytestmark = [pytest.mark.llm, pytest.mark.e2e, pytest.mark.timeout(1800)]
API = "/api/research/v1"
SERVICES = ("connector", "researcher", "critic", "scout", "verifier", "gateway")
RUN_BUDGET_S = 60  # model seconds per run: a run past it is answered offline, and says so
WAIT_S = 600  # a bound on one request's end-to-end time on a loaded 2-core machine, not a speed


def model_env(llama: LlamaServer) -> dict[str, str]:
    """The settings a user with a local llama.cpp server sets (docs/local-models.md)."""
    return {
        "LLM__PROVIDER": "openai",
        "LLM__OPENAI_BASE_URL": llama.base_url,
        "LLM__OPENAI_MODEL": MODEL_NAME,
        "LLM__OPENAI_API_KEY": "",
        "LLM__CONCURRENCY": "1",
        "LLM__TIMEOUT_S": "45",
        "LLM__MAX_OUTPUT_TOKENS": "400",
        "LLM__RUN_BUDGET_S": str(RUN_BUDGET_S),
        "CRITIC__SLA_SECONDS": "150",  # above one request's bound (2 × 45 s + 5 s): a slow critique is not a timeout
        "SCOUT__ENGINE": "llm",
        "SCOUT__MAX_ITERATIONS": "1",
        "SCOUT__PER_SOURCE_LIMIT": "3",
        "SCOUT__LLM_TIMEOUT_S": "100",
        "VERIFIER__LLM_TIMEOUT_S": "100",
        "VERIFIER__QUALIFIER_SEARCHES": "0",
        "ACK_WAIT_S": "300",
    }


@pytest.fixture(scope="module")
def stack(
    llama: LlamaServer, servers: Servers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    running = Stack(
        tmp_path_factory.mktemp("llm-stack"),
        gateway_port=free_port(),
        services=SERVICES,
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        extra_env=model_env(llama),
    )
    running.start_servers()
    errors: list[BaseException] = []

    def ingest() -> None:
        try:
            asyncio.run(ingest_demo_corpus(servers.database_url))
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    worker = threading.Thread(target=ingest)
    worker.start()
    running.start_services()
    worker.join()
    try:
        if errors:
            raise errors[0]
        running.wait_ready(timeout=600)  # model-loading services on a loaded 2-core machine
        yield running
    finally:
        running.stop()


async def poll(client: httpx.AsyncClient, path: str, done: Any, what: str) -> dict:
    """GET `path` until `done(view)`; fails (never hangs) after WAIT_S."""
    deadline, view = time.monotonic() + WAIT_S, None
    while time.monotonic() < deadline:
        reply = await client.get(path)
        if reply.status_code == 200:
            view = reply.json()
            if done(view):
                return view
        await asyncio.sleep(2)
    raise AssertionError(f"{what} did not end within {WAIT_S}s: {view}")


async def usage_step(js: Any, run_id: str) -> dict:
    """The run's `llm.usage` step (research_modes.mode_run)."""
    steps = [
        e.results
        async for _, e in replay(js, run_id)
        if isinstance(e, ToolReturned) and e.tool_id == "llm.usage"
    ]
    assert len(steps) == 1, f"one llm.usage step per run that asked a model: {steps}"
    return steps[0]


def assert_grounded(report: Report) -> None:
    """What the reader sees cites only papers the searches returned, and quotes them verbatim."""
    assert check_report(report).unknown == 0, "no reference the searches never returned"
    for reference in report.references:
        assert (reference.paper_id or "").startswith("corpus:"), reference
    for section in report.sections:
        for finding in section.findings:
            for quote in finding.quotes:
                cited = report.reference(quote.reference_id)
                assert cited is not None, quote
                if cited.source_text:
                    assert found_verbatim(quote.text, cited.source_text), quote.text


async def stored_report(client: httpx.AsyncClient, report_id: str) -> Report:
    content = (await client.get(f"{API}/reports/{report_id}")).json()["content"]
    return Report.model_validate(
        content.get("report", content)
    )  # a source-list snapshot holds its report


def assert_accounted(used: dict) -> None:
    """Requests counted with the server's tokens, a local model at no cost, the budget held, every fallback explained."""
    assert used["calls"] >= 1 and used["models"] == {f"openai:{MODEL_NAME}": used["calls"]}, used
    assert used["cost_usd"] == 0.0, "a local model costs nothing"
    assert used["budget"]["seconds"] == RUN_BUDGET_S
    assert used["seconds"] <= RUN_BUDGET_S + 5, "no request outlives the run's budget"
    for fallback in used["fallbacks"]:
        assert (
            fallback["question"]
            and fallback["reasons"]
            and all(r.startswith("openai: ") for r in fallback["reasons"])
        )
    if used["budget_spent"]:
        assert used["budget_spent"].startswith("run budget spent")


async def test_a_question_gets_a_decided_claim_drafted_by_the_model_or_offline_with_the_reason(
    stack: Stack,
) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=60
    ) as client:
        accepted = await client.post(
            f"{API}/tasks", json={"question": "Does vitamin D supplementation prevent fractures?"}
        )
        assert accepted.status_code == 202
        task_id = accepted.json()["task_id"]
        view = await poll(
            client,
            f"{API}/tasks/{task_id}",
            lambda v: (
                v["status"] == "failed"
                or (v.get("claim") or {}).get("status") not in (None, "pending")
            ),
            "the task",
        )
        assert view["status"] == "claimed", view
        claim = view["claim"]
        assert claim["statement"].strip()
        if (
            claim["status"] != "critic_quarantine"
        ):  # the critic's SLA missed three times: held for an operator, said so
            assert (
                claim["status"] in {"active", "rejected"} and claim["verdict"]["reasoning"].strip()
            ), claim
        audit = (await client.get(f"{API}/audit", params={"claim_id": claim["claim_id"]})).json()
    proposed = next(r["payload"] for r in audit if r["action"] == "research.claim.proposed")
    failures = [r["payload"] for r in audit if r["action"] == "research.llm.provider_failed"]
    used = proposed["llm_usage"]
    assert used["calls"] >= 1 and used["models"] == {f"openai:{MODEL_NAME}": used["calls"]}, used
    assert used["cost_usd"] == 0.0 and used["seconds"] <= RUN_BUDGET_S + 5
    if claim["model"].startswith("openai:"):
        assert claim["supports"], "a model's draft reaches the ledger only with a grounded citation"
        assert not failures
    else:
        assert claim["model"].startswith("offline"), claim["model"]
        assert failures and all(f["provider"] == "openai" and f["reason"] for f in failures), (
            "the fallback says why"
        )
    for support in claim["supports"]:
        assert support["source_id"].startswith("corpus:") and support["quote"].strip()


async def test_a_verification_is_decided_by_the_judge_and_checked_by_the_model_when_it_speaks(
    stack: Stack, nc
) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=60
    ) as client:
        accepted = await client.post(
            f"{API}/verifications",
            json={
                "claim": "Vitamin D supplementation reduces the risk of fractures in older adults."
            },
        )
        assert accepted.status_code == 202, accepted.text
        ids = accepted.json()
        view = await poll(
            client,
            f"{API}/verifications/{ids['verification_id']}",
            lambda v: v["status"] in {"completed", "failed"},
            "the verification",
        )
        assert view["status"] == "completed", view.get("error")
        assert view["verdict"] and view["markdown"].strip()
        report = await stored_report(client, ids["verification_id"])
    # The default role is `check`: the offline judge decides and the model may only veto a
    # SUPPORTED / CONTRADICTED verdict (research_verifier.veto); other verdicts are not asked.
    assert report.metadata["engine"] == "offline"
    assert report.metadata["judge"], "the judge's version is recorded"
    checked = report.metadata["llm_check"]
    assert_grounded(report)
    decided = view["verdict"].replace("_", " ") not in {"INSUFFICIENT EVIDENCE", "MIXED EVIDENCE"}
    if checked["ran"]:
        assert checked["answer"] in {"SUPPORTS", "CONTRADICTS", "NEITHER"}, checked
        assert checked["agrees"] == decided, "a disagreement leaves no SUPPORTED / CONTRADICTED"
        assert_accounted(await usage_step(nc.jetstream(), ids["run_id"]))
    elif "was not asked" in checked["reason"]:
        assert not decided, "a decided verdict is always put to the check"
    else:  # the model did not answer: the judge's verdict stands, with the reason
        assert checked["reason"].startswith("the LLM check did not run"), checked


async def test_a_source_list_holds_to_its_sources_and_says_what_fell_back(stack: Stack, nc) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=60
    ) as client:
        workspace = f"llm-{uuid.uuid4().hex[:6]}"
        limits = await client.put(
            f"{API}/source-lists/limits/{workspace}",
            json={"allowed_apis": ["corpus"], "max_references": 2},
        )
        assert limits.status_code == 200, limits.text
        accepted = await client.post(
            f"{API}/source-lists",
            json={
                "prompt": "vitamin D supplementation and fracture risk",
                "workspace": workspace,
                "num_references": 2,
                "detail_level": "facts_list",
            },
        )
        assert accepted.status_code == 202, accepted.text
        ids = accepted.json()
        runs = await poll(
            client,
            f"{API}/source-lists/{ids['source_list_id']}/runs",
            lambda v: v["runs"] and v["runs"][0]["status"] in {"completed", "failed"},
            "the source list",
        )
        assert runs["runs"][0]["status"] == "completed", runs["runs"][0]
        listed = (await client.get(f"{API}/source-lists/{ids['source_list_id']}")).json()
        report = await stored_report(client, ids["source_list_id"])
    for source in listed["sources"]:
        assert source["title"] and source["summary"].strip()
        assert all(fact["statement"].strip() for fact in source.get("facts") or [])
    assert_grounded(report)
    assert_accounted(await usage_step(nc.jetstream(), ids["run_id"]))
