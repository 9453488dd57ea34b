"""Every service process serves Prometheus metrics on its own port; after a task went through the
whole pipeline, each endpoint is scraped and the series a dashboard or an operator reads are there
with values that match what happened (one task consumed and acked, one draft, one verdict…)."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from research_contracts import subjects
from research_engine.stack import Stack
from tests.scrape import scrape, value

pytestmark = pytest.mark.e2e
API = "/api/research/v1"
TERMINAL = {"active", "rejected", "superseded", "critic_quarantine"}


async def _decided(client: httpx.AsyncClient, task_id: str, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = (await client.get(f"{API}/tasks/{task_id}")).json()
        if (view.get("claim") or {}).get("status") in TERMINAL:
            return view
        await asyncio.sleep(0.3)
    raise AssertionError(f"task {task_id} undecided after {timeout}s")


async def test_each_service_is_scraped_on_its_own_port_with_the_named_series(stack: Stack) -> None:
    assert len(set(stack.metrics_ports.values())) == len(stack.services), (
        "one metrics port per service"
    )
    targets = json.loads(
        stack.metrics_targets.read_text()
    )  # what a local Prometheus reads (file_sd)
    assert {g["labels"]["job"]: g["targets"] for g in targets} == {
        name: [f"127.0.0.1:{port}"] for name, port in stack.metrics_ports.items()
    }

    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        reply = await client.post(
            f"{API}/tasks",
            json={
                "question": "Does vitamin D supplementation prevent fractures?",
                "tier": "priority",
            },
        )
        assert reply.status_code == 202
        await _decided(client, reply.json()["task_id"])

    scraped = {name: scrape(stack.metrics_url(name)) for name in stack.services}
    # every process registered the shared families (some have no samples yet)
    for name in stack.services:
        text = httpx.get(stack.metrics_url(name), timeout=10).text  # noqa: ASYNC210 - the stack serves from its own processes
        for family in ("research_messages_total", "research_consumer_pending_messages"):
            assert f"# TYPE {family} " in text, (name, family)

    researcher, critic = scraped["researcher"], scraped["critic"]
    task = {"service": "researcher", "subject": subjects.task_subject("priority")}
    assert (value(researcher, "research_messages_total", **task, result="acked") or 0) >= 1
    handler = {"app_name": "researcher", "handler": subjects.task_subject("priority")}
    assert (
        value(researcher, "research_received_processed_messages_duration_seconds_count", **handler)
        or 0
    ) >= 1
    assert value(researcher, "research_received_messages_in_process", **handler) == 0
    assert (
        value(
            researcher,
            "research_llm_calls_total",
            provider="offline",
            operation="draft",
            outcome="ok",
        )
        or 0
    ) >= 1
    durable = subjects.RESEARCHER_DURABLES["priority"]
    assert (
        value(
            researcher,
            "research_consumer_pending_messages",
            stream=subjects.TASKS_STREAM,
            consumer=durable,
        )
        is not None
    )

    assert (
        value(
            critic,
            "research_messages_total",
            service="critic",
            subject=subjects.CLAIM_PENDING,
            result="acked",
        )
        or 0
    ) >= 1
    assert (
        value(
            critic, "research_llm_calls_total", provider="offline", operation="judge", outcome="ok"
        )
        or 0
    ) >= 1
    assert (
        value(
            critic,
            "research_consumer_pending_messages",
            stream=subjects.CLAIMS_STREAM,
            consumer=subjects.CRITIC_PENDING_DURABLE,
        )
        is not None
    )

    connector = scraped["connector"]
    assert (value(connector, "research_connector_requests_total", source="corpus") or 0) >= 1
    assert (
        value(connector, "research_connector_request_duration_seconds_count", source="corpus") or 0
    ) >= 1

    gateway = scraped["gateway"]
    posted = {"handler": f"{API}/tasks", "method": "POST"}
    assert (value(gateway, "http_requests_total", **posted, status="2xx") or 0) >= 1
    read = {
        "handler": f"{API}/tasks/{{task_id}}",
        "method": "GET",
    }  # the route template, never the id
    assert (value(gateway, "http_request_duration_seconds_count", **read) or 0) >= 1
    assert (
        value(
            gateway,
            "research_published_messages_total",
            app_name="gateway",
            destination=subjects.task_subject("priority"),
            status="success",
        )
        or 0
    ) >= 1
