"""E2E: `research-engine mcp` launched as an assistant launches it, driven by the SDK's own stdio
client, talking to the running stack's gateway over HTTP with `RESEARCH_API_KEY`."""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from research_engine.stack import Stack
from tests.gateway.mcp.common import REVIEW_TOPIC, TOOL_NAMES, answer, error_text, resource_text

pytestmark = pytest.mark.e2e
COMMAND = [sys.executable, "-m", "research_engine.cli", "mcp"]


def _env(key: str | None, tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RESEARCH_API_KEY", "RESEARCH_URL")}
    # No config file and no local key here: the key is the one given, or none.
    env.update({"RESEARCH_CONFIG": str(tmp_path / "none.toml"), "DATA_DIR": str(tmp_path)})
    if key:
        env["RESEARCH_API_KEY"] = key
    return env


def stdio_client(stack: Stack, key: str, tmp_path) -> Client:
    params = StdioServerParameters(
        command=COMMAND[0], args=[*COMMAND[1:], "--url", stack.gateway_url], env=_env(key, tmp_path)
    )
    return Client(params, read_timeout_seconds=600)


def test_without_a_key_the_command_refuses_to_start(stack: Stack, tmp_path) -> None:
    result = subprocess.run(
        [*COMMAND, "--url", stack.gateway_url],
        env=_env(None, tmp_path),
        check=False,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "RESEARCH_API_KEY" in result.stderr and result.stdout == ""


async def test_a_reader_key_reads_but_is_refused_start_review(stack: Stack, keys, tmp_path) -> None:
    async with stdio_client(stack, keys["reader"], tmp_path) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOL_NAMES
        refused = await client.call_tool("start_review", {"topic": REVIEW_TOPIC})
        assert "researcher role" in error_text(refused)
        assert isinstance(
            answer(await client.call_tool("search_ledger", {"status": "active"}))["claims"], list
        )
        bad = await client.call_tool("list_findings", {"limit": 0})
        assert "limit" in error_text(bad)


async def test_a_review_over_stdio_reports_progress_and_reads_back(
    stack: Stack, keys, tmp_path
) -> None:
    heard: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(message)

    async with stdio_client(stack, keys["researcher"], tmp_path) as client:
        review = answer(
            await client.call_tool(
                "start_review",
                {"topic": "aspirin and the risk of colorectal cancer", "wait_seconds": 600},
                progress_callback=on_progress,
            )
        )
        assert review["status"] == "completed" and review["markdown"].startswith("#")
        assert any("verdict" in (m or "") for m in heard) and heard[-1] == "run completed"
        report = await client.read_resource(f"research://reports/{review['review_id']}")
        assert resource_text(report) == review["markdown"]
        got = answer(await client.call_tool("get_review", {"review_id": review["review_id"]}))
        assert got["status"] == "completed" and got["verdict"] == review["verdict"]
        claims = answer(await client.call_tool("search_ledger", {"limit": 5}))["claims"]
        if claims:  # the review's findings were proposed to the ledger
            one = answer(await client.call_tool("get_claim", {"claim_id": claims[0]["claim_id"]}))
            assert one["claim_id"] == claims[0]["claim_id"]

        # A cancelled call ends at once (the client stops waiting, the server stops following the
        # run) and the session goes on. The call is cancelled at its first progress notification,
        # mid-run whatever the review's speed (a clock bound failed once the relevance filter made
        # this corpus's reviews finish within a second).
        with anyio.CancelScope() as scope:

            async def cancel_at_first(
                progress: float, total: float | None, message: str | None
            ) -> None:
                scope.cancel()

            await client.call_tool(
                "start_review",
                {"topic": "aspirin use and colorectal cancer incidence", "wait_seconds": 600},
                progress_callback=cancel_at_first,
            )
        assert scope.cancelled_caught
        assert (
            answer(await client.call_tool("get_review", {"review_id": review["review_id"]}))[
                "status"
            ]
            == "completed"
        )
