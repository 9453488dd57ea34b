"""The engine as an MCP server (the official `mcp` SDK): one implementation, two transports.

server.py       the tools, resources and progress (the SDK's low-level `Server`)
tools.py        each tool as calls of the gateway's HTTP API, schemas from the API's models
gateway_api.py  `GatewayApi`: the API in process (for `/mcp`) or over HTTP (for stdio)
http.py         `/mcp` on the gateway (streamable HTTP) behind the API's keys
stdio.py        `research-engine mcp`: the same server on stdin/stdout, talking to a gateway URL
"""

from research_gateway.mcp.http import install
from research_gateway.mcp.server import build_server

__all__ = ["build_server", "install"]
