"""Read routes of the gateway on the running stack: the SSE event stream, the audit log, findings."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from research_engine.stack import Stack

pytestmark = pytest.mark.e2e
API = "/api/research/v1"


async def test_events_stream_reports_the_claim_of_a_submitted_task(stack: Stack) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=httpx.Timeout(30, read=600)
    ) as client:
        async with client.stream("GET", f"{API}/events") as events:
            lines = events.aiter_lines()
            first = await anext(lines)
            if first.startswith("retry:"):  # the reconnect delay may come first (research_runs.sse)
                first = await anext(lines)
            assert first.startswith(": connected"), first
            reply = await client.post(
                f"{API}/tasks",
                json={
                    "question": "Does exercise training improve quality of life in heart failure?"
                },
            )
            task_id = reply.json()["task_id"]
            seen: dict[str, dict] = {}

            async def _read() -> None:
                event = None
                async for line in lines:
                    if line.startswith("event: "):
                        event = line.removeprefix("event: ")
                    elif line.startswith("data: ") and event:
                        data = json.loads(line.removeprefix("data: "))
                        if data.get("task_id") == task_id:
                            seen[event] = data
                            if event == "decided":
                                return

            await asyncio.wait_for(_read(), timeout=600)
        assert "pending" in seen and seen["decided"]["status"] in {"active", "rejected"}

        audit = (await client.get(f"{API}/audit", params={"task_id": task_id})).json()
        actions = {row["action"] for row in audit}
        assert {
            "research.task.submitted",
            "research.task.started",
            "research.claim.proposed",
        } <= actions
        assert actions & {"research.claim.promoted", "research.claim.rejected"}
        findings = await client.get(f"{API}/findings", params={"unresolved": True})
        assert findings.status_code == 200 and isinstance(findings.json(), list)
