"""`research-engine mcp`: the engine's MCP server on stdin/stdout, for AI assistants that launch
a command (Claude Desktop's `claude_desktop_config.json`, IDE agents). It talks to a running
gateway (`--url`, `RESEARCH_URL`, the config file or http://127.0.0.1:8080) with
`RESEARCH_API_KEY`, the config file's key or the local admin key of `research-engine up`.
A gateway also serves the same tools over streamable HTTP at `/mcp`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def mcp(
    url: Annotated[str | None, typer.Option("--url", help="Gateway URL (default RESEARCH_URL, the config file, or http://127.0.0.1:8080).")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Where `research-engine up` keeps the local key.")] = None,
) -> None:
    """Serve the MCP tools (ask_question, verify_claim, start_review, …) on stdin/stdout."""
    import anyio

    from research_client.credentials import resolve
    from research_gateway.mcp.stdio import serve_stdio

    credentials = resolve(url, None, data_dir=data_dir)
    if credentials.api_key is None:
        typer.echo("error: no API key: set RESEARCH_API_KEY (or run `research-engine up` here for the local admin key)",
                   err=True)
        raise typer.Exit(2)
    anyio.run(serve_stdio, credentials.url, credentials.api_key)
