"""What the MCP tests share: the tool names, a JSON reading of tool results, the SDK clients."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOOL_NAMES = {
    "ask_question",
    "verify_claim",
    "start_review",
    "get_review",
    "build_source_list",
    "get_source_list",
    "search_ledger",
    "get_claim",
    "list_findings",
}
REVIEW_TOPIC = "vitamin D supplementation and fracture risk in older adults"


def http_client(url: str, key: str | None) -> Client:
    """The SDK's client over streamable HTTP, sending `key` as `X-API-Key`."""
    headers = {"X-API-Key": key} if key else {}
    transport = streamable_http_client(
        f"{url}/mcp",
        http_client=httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0, read=900.0)),
    )
    return Client(transport, read_timeout_seconds=600)


def answer(result: types.CallToolResult) -> dict[str, Any]:
    """A successful tool result as JSON (fails the test with the tool's reason otherwise)."""
    first = result.content[0]
    assert isinstance(first, types.TextContent), result.content
    assert not result.is_error, first.text
    return json.loads(first.text)


def resource_text(result: types.ReadResourceResult) -> str:
    """The text of a resource read back (fails the test when it came back as a blob)."""
    first = result.contents[0]
    assert isinstance(first, types.TextResourceContents), result.contents
    return first.text


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error, result.content
    first = result.content[0]
    assert isinstance(first, types.TextContent), result.content
    return first.text
