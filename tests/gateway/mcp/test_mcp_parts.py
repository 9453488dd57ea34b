"""Unit: the MCP layer's own pieces — schemas from the API's models, progress lines from run
events, the key a request presents, reasons from the API's errors, in-process streaming."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from starlette.datastructures import Headers

from research_contracts.reviews import RequestReview
from research_contracts.runs import RunDone, ToolCalled, VerdictReached
from research_gateway.mcp.gateway_api import GatewayApi, StreamingASGITransport, _reason
from research_gateway.mcp.http import presented_key
from research_gateway.mcp.tools import TOOLS, describe_event
from research_gateway.schemas import TaskSubmission

pytestmark = pytest.mark.unit


def test_tool_schemas_are_the_api_models_schemas_plus_the_tools_own_options() -> None:
    ask = TOOLS["ask_question"].input_schema
    model = TaskSubmission.model_json_schema()
    assert {k: ask["properties"][k] for k in model["properties"]} == model["properties"]
    assert (
        ask["properties"]["wait_seconds"]["maximum"] == 900 and ask["additionalProperties"] is False
    )
    review = TOOLS["start_review"].input_schema
    assert review["properties"]["topic"] == RequestReview.model_json_schema()["properties"]["topic"]
    assert not {"run_id", "refresh", "origin"} & set(review["properties"])


def test_run_events_become_progress_lines() -> None:
    assert (
        describe_event(
            ToolCalled(
                run_id="rv-1",
                agent="researcher",
                tool_call_id="t1",
                tool_id="research.search_papers",
            )
        )
        == "researcher called research.search_papers"
    )
    assert (
        describe_event(
            VerdictReached(run_id="rv-1", agent="peer_reviewer", verdict="PASS", confidence="HIGH")
        )
        == "peer_reviewer verdict: PASS (HIGH)"
    )
    assert describe_event(RunDone(run_id="rv-1", status="failed")) == "run failed"


def test_the_key_comes_from_x_api_key_or_a_bearer_token_never_a_cookie() -> None:
    assert presented_key(Headers({"x-api-key": "rek_a"})) == "rek_a"
    assert presented_key(Headers({"authorization": "Bearer rek_b"})) == "rek_b"
    assert presented_key(Headers({"authorization": "Basic xyz"})) is None
    assert presented_key(Headers({"cookie": "research_console_key=rek_c"})) is None


def test_api_errors_read_as_reasons() -> None:
    assert (
        _reason(403, "this route needs the researcher role (this key: reader)")
        == "refused (403): this route needs the researcher role (this key: reader)"
    )
    assert (
        _reason(
            422, [{"loc": ["body", "claim"], "msg": "String should have at least 3 characters"}]
        )
        == "invalid input: claim: String should have at least 3 characters"
    )


async def test_in_process_responses_stream_before_the_app_finishes() -> None:
    app = FastAPI()
    release = asyncio.Event()

    @app.get("/api/research/v1/slow")
    async def slow() -> StreamingResponse:
        async def body():
            yield b"first\n"
            await release.wait()
            yield b"second\n"

        return StreamingResponse(body(), media_type="text/plain")

    api = GatewayApi.in_process(app, "rek_x")
    async with api.http.stream("GET", "/api/research/v1/slow") as reply:
        lines = reply.aiter_lines()
        assert (
            await asyncio.wait_for(anext(lines), timeout=5) == "first"
        )  # the app is still waiting
        release.set()
        assert await asyncio.wait_for(anext(lines), timeout=5) == "second"
    await api.aclose()
    assert isinstance(api.http._transport, StreamingASGITransport)
