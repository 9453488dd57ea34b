"""The MCP server on stdin/stdout, for assistants that launch a command (`research-engine mcp`).

The same tools as `/mcp`; here each call goes to the gateway at `url` over HTTP with one key
(`RESEARCH_API_KEY`, the config file or the local admin key: `research_client.credentials`), so
the gateway's validation, de-identification and role checks apply exactly as on `/mcp`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from research_gateway.mcp.gateway_api import GatewayApi
from research_gateway.mcp.server import build_server


async def serve_stdio(url: str, key: str | None) -> None:
    """Serve one assistant on this process's stdin/stdout until it closes them."""
    api = GatewayApi.over_http(url, key)

    @asynccontextmanager
    async def api_for(ctx: ServerRequestContext[Any, Any]) -> AsyncIterator[GatewayApi]:
        yield api  # one client for the process: the key is the process's, not per request

    server = build_server(api_for)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await api.aclose()
