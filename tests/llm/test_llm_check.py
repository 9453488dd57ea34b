"""`research-engine llm check` against the local fake OpenAI-compatible server: one schema-bound
request (valid → exit 0), the probe that tells a server that enforces the schema from one that
lets the model answer prose, and a server that is down (exit 1, the reason printed)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from research_engine.cli import app
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer

pytestmark = pytest.mark.unit

VALID = json.dumps({"answer": "yes", "count": 3, "colours": ["red", "green", "blue"]})


def test_a_server_that_follows_but_does_not_enforce_the_schema(llm_server: FakeLLMServer) -> None:
    llm_server.queue("openai", Behaviour(text=VALID), Behaviour(text="It is sunny today."))
    result = CliRunner().invoke(
        app,
        ["llm", "check", "--base-url", llm_server.openai_url, "--model", "tiny", "--timeout", "5"],
    )
    assert result.exit_code == 0, result.output
    assert "schema-bound answer: valid" in result.output
    assert "tokens in/out: 1/1" in result.output
    assert "response_format json_schema: NOT enforced" in result.output
    [first, _second] = llm_server.sent("openai")
    assert (
        first.body["response_format"]["json_schema"]["name"] == "llm_check"
        and first.body["model"] == "tiny"
    )
    schema = first.body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["colours"]["maxItems"] == 3 and schema["properties"]["answer"][
        "enum"
    ] == ["yes", "no"]


def test_a_server_that_enforces_the_schema_and_one_that_is_down(llm_server: FakeLLMServer) -> None:
    llm_server.queue("openai", Behaviour(text=VALID), Behaviour(text=VALID))
    result = CliRunner().invoke(
        app, ["llm", "check", "--base-url", llm_server.openai_url, "--timeout", "5"]
    )
    assert result.exit_code == 0 and "response_format json_schema: enforced" in result.output, (
        result.output
    )
    llm_server.queue("openai", Behaviour(status=503))
    result = CliRunner().invoke(
        app, ["llm", "check", "--base-url", llm_server.openai_url, "--timeout", "5"]
    )
    assert result.exit_code == 1 and "request: FAILED — HTTP 503" in result.output, result.output
