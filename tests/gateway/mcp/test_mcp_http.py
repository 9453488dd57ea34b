"""E2E: the SDK's own client over streamable HTTP at the gateway's `/mcp` (running stack)."""

from __future__ import annotations

import uuid

import httpx
import pytest

from research_engine.stack import Stack
from tests.gateway.mcp.common import (
    REVIEW_TOPIC,
    TOOL_NAMES,
    answer,
    error_text,
    http_client,
    resource_text,
)

pytestmark = pytest.mark.e2e


async def test_no_key_or_an_unknown_key_is_refused_with_401(stack: Stack) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=30) as raw:
        keyless = await raw.post("/mcp", json=initialize, headers=headers)
        unknown = await raw.post(
            "/mcp", json=initialize, headers={**headers, "X-API-Key": "rek_not-a-key"}
        )
    assert keyless.status_code == 401 and keyless.headers["www-authenticate"] == "Bearer"
    assert "API key is required" in keyless.json()["detail"]
    assert unknown.status_code == 401 and "unknown or revoked" in unknown.json()["detail"]
    with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's client cannot even start the session
        async with http_client(stack.gateway_url, None) as client:
            await client.list_tools()


async def test_tools_are_listed_with_the_api_models_schemas(stack: Stack, keys) -> None:
    async with http_client(stack.gateway_url, keys["reader"]) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOL_NAMES
    ask = tools["ask_question"].input_schema
    assert (
        ask["required"] == ["question"] and ask["properties"]["question"]["maxLength"] == 2000
    )  # TaskSubmission
    assert {"topic", "filters", "sources", "max_iterations", "wait_seconds"} <= set(
        tools["start_review"].input_schema["properties"]
    )
    assert "run_id" not in tools["start_review"].input_schema["properties"]  # set by the server
    assert tools["search_ledger"].input_schema["properties"]["status"]
    assert all(t.description and len(t.description) > 40 for t in tools.values())


async def test_a_reader_key_is_refused_start_review_with_the_role_named(stack: Stack, keys) -> None:
    async with http_client(stack.gateway_url, keys["reader"]) as client:
        refused = await client.call_tool("start_review", {"topic": REVIEW_TOPIC, "wait_seconds": 0})
        assert "researcher role" in error_text(refused) and "reader" in error_text(refused)
        assert (
            answer(await client.call_tool("list_findings", {}))["findings"] is not None
        )  # a reader may read
        assert (await client.list_tools()).tools  # the session goes on


async def test_malformed_arguments_are_tool_errors_with_the_reason(stack: Stack, keys) -> None:
    async with http_client(stack.gateway_url, keys["researcher"]) as client:
        empty = await client.call_tool("verify_claim", {"claim": "", "wait_seconds": 0})
        assert "invalid input" in error_text(empty) and "claim" in error_text(empty)
        waiting = await client.call_tool(
            "start_review", {"topic": REVIEW_TOPIC, "wait_seconds": "soon"}
        )
        assert "wait_seconds" in error_text(waiting)
        not_an_id = await client.call_tool("get_claim", {"claim_id": "12"})
        assert "claim_id" in error_text(not_an_id)
        unknown = await client.call_tool("get_claim", {"claim_id": str(uuid.uuid4())})
        assert "not found" in error_text(unknown)
        extra = await client.call_tool(
            "ask_question", {"question": "Does zinc shorten colds?", "colour": "red"}
        )
        # the reason, not the key: a key the caller made up may be a name (the API's 422 says "(a key)")
        assert "Extra inputs are not permitted" in error_text(extra)
        assert "colour" not in error_text(extra)
        nope = await client.call_tool("drop_tables", {})
        assert "unknown tool" in error_text(nope)
        assert {t.name for t in (await client.list_tools()).tools} == TOOL_NAMES  # still serving


async def test_ask_question_then_read_the_claim_back_every_way(stack: Stack, keys) -> None:
    async with http_client(stack.gateway_url, keys["researcher"]) as client:
        question = {
            "question": "Does vitamin D supplementation prevent fractures?",
            "wait_seconds": 240,
        }
        asked = answer(await client.call_tool("ask_question", question))
        for _ in range(
            3
        ):  # not decided within the wait: asking again with the task_id keeps waiting
            if asked["claim"] and asked["claim"]["status"] != "pending":
                break
            assert asked["next"] and asked["task_id"]
            asked = answer(
                await client.call_tool("ask_question", {**question, "task_id": asked["task_id"]})
            )
        claim = asked["claim"]
        assert claim["status"] in {"active", "rejected"} and claim["statement"]
        assert all(q["source_id"].startswith("corpus:") and q["quote"] for q in claim["quotes"])

        got = answer(await client.call_tool("get_claim", {"claim_id": claim["claim_id"]}))
        assert got["statement"] == claim["statement"] and got["supports"] and got["history"]
        found = answer(await client.call_tool("search_ledger", {"text": "vitamin", "limit": 50}))
        assert claim["claim_id"] in [c["claim_id"] for c in found["claims"]]
        assert (
            answer(await client.call_tool("search_ledger", {"text": "zzqx unheard of words"}))[
                "claims"
            ]
            == []
        )
        assert isinstance(
            answer(await client.call_tool("list_findings", {"limit": 5}))["findings"], list
        )
        claim_resource = await client.read_resource(f"research://claims/{claim['claim_id']}")
        assert claim["statement"] in resource_text(claim_resource)


@pytest.mark.timeout(900)
async def test_a_review_reports_progress_and_its_report_is_a_resource(stack: Stack, keys) -> None:
    heard: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, message))

    async with http_client(stack.gateway_url, keys["researcher"]) as client:
        review = answer(
            await client.call_tool(
                "start_review",
                {"topic": REVIEW_TOPIC, "wait_seconds": 800},
                progress_callback=on_progress,
            )
        )
        assert review["status"] == "completed", review
        assert review["verdict"] and review["markdown"].startswith("#")
        messages = [m for _, m in heard]
        assert any("verdict" in (m or "") for m in messages), (
            messages
        )  # the peer reviewer's verdict
        assert any("called" in (m or "") for m in messages) and messages[-1] == "run completed"
        assert [s for s, _ in heard] == sorted(s for s, _ in heard)
        again = answer(await client.call_tool("get_review", {"review_id": review["review_id"]}))
        assert again["markdown"] == review["markdown"]
        report = await client.read_resource(f"research://reports/{review['review_id']}")
        assert (
            report.contents[0].mime_type == "text/markdown"
            and resource_text(report) == review["markdown"]
        )


@pytest.mark.timeout(900)
async def test_verify_claim_answers_the_verdict_line_and_quoted_evidence(
    stack: Stack, keys
) -> None:
    async with http_client(stack.gateway_url, keys["researcher"]) as client:
        verified = answer(
            await client.call_tool(
                "verify_claim",
                {"claim": "Vitamin D supplementation reduces hip fractures", "wait_seconds": 800},
            )
        )
    assert (
        verified["status"] == "completed" and " · " in verified["verdict"] and verified["headline"]
    ), verified
    assert verified["report_id"] == verified["verification_id"]
    assert verified["resource"] == f"research://reports/{verified['report_id']}"
    # Each passage with a stance is evidence with its verbatim quote and the cited paper (none: "insufficient").
    assert all(e["quotes"][0]["text"] and e["cites"][0]["title"] for e in verified["evidence"]), (
        verified["evidence"]
    )
    if not verified["evidence"]:
        assert "INSUFFICIENT" in verified["verdict"].upper(), verified


@pytest.mark.timeout(900)
async def test_a_source_list_is_built_and_read_back(stack: Stack, keys) -> None:
    async with http_client(stack.gateway_url, keys["researcher"]) as client:
        # a subject the demo corpus covers (HF-ACTION); it holds no paper on vitamin D and fractures,
        # and a list of that prompt is rightly empty since the relevance calibration reads coverage
        built = answer(
            await client.call_tool(
                "build_source_list",
                {
                    "prompt": "exercise training and health status in chronic heart failure",
                    "num_references": 3,
                    "wait_seconds": 800,
                },
            )
        )
        assert built["status"] == "ready" and built["sources"], built
        listed = answer(
            await client.call_tool("get_source_list", {"source_list_id": built["source_list_id"]})
        )
    assert [s["source_id"] for s in listed["sources"]] == [s["source_id"] for s in built["sources"]]
