"""`research-engine mcp`: the engine's MCP server on stdin/stdout, for AI assistants that launch
a command (Claude Desktop's `claude_desktop_config.json`, IDE agents). It talks to a running
gateway (`--url`, `RESEARCH_URL`, the config file or http://127.0.0.1:8080) with
`RESEARCH_API_KEY`, the config file's key or the local admin key of `research-engine up`.
A gateway also serves the same tools over streamable HTTP at `/mcp`.

stdout carries JSON-RPC only. Logs go to stderr, structured (JSON when stderr is not a
terminal), exceptions as their type and frames, never their text or locals: a tool's arguments
are a person's raw text until the gateway de-identifies them. The first log line says which key
is used (where it came from, never the key). A key is never sent over plain http to another
machine, and the local admin key never leaves this machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def mcp(
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="Gateway URL (default RESEARCH_URL, the config file, or http://127.0.0.1:8080).",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Where `research-engine up` keeps the local key."),
    ] = None,
) -> None:
    """Serve the MCP tools (ask_question, verify_claim, start_review, …) on stdin/stdout."""
    import anyio

    from research_client.credentials import exposure, resolve
    from research_gateway.mcp.stdio import serve_stdio
    from research_platform.logging import configure_logging, get_logger
    from research_platform.settings import get_settings

    settings = get_settings()
    configure_logging("mcp", settings.log_level, settings.log_json, exception_text=False)
    credentials = resolve(url, None, data_dir=data_dir)
    if credentials.api_key is None:
        typer.echo(
            "error: no API key: set RESEARCH_API_KEY (or run `research-engine up` here for the local admin key)",
            err=True,
        )
        raise typer.Exit(2)
    refused = exposure(credentials)
    if refused is not None:
        typer.echo(f"error: {refused}", err=True)
        raise typer.Exit(2)
    get_logger(__name__).info("mcp.serving", gateway=credentials.url, key_from=credentials.key_from)
    anyio.run(serve_stdio, credentials.url, credentials.api_key)
