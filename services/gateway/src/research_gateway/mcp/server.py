"""The MCP server (the SDK's low-level `Server`): tools, resources and progress, transport-free.

`build_server(api_for)` takes how a request reaches the gateway's API: `api_for(ctx)` yields a
`GatewayApi` carrying the caller's key (in process for `/mcp`, over HTTP for stdio). Tools are
listed from `tools.TOOLS`; a call reports each run event as a progress notification (when the
client sent a progress token); a cancelled call stops where it waits (anyio cancellation; the
run itself goes on in the engine and can be read later). Every failure of a call is a tool
result with `isError` and the reason, never an exception out of the session; an unexpected one
is logged as its type and frames only (its message could quote the arguments).

Resources: `research://reports/{id}` (a report's Markdown, any mode) and `research://claims/{id}`
(a ledger claim as JSON); `resources/list` names the newest reviews.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from research_gateway.mcp.gateway_api import GatewayApi, ToolFailure
from research_gateway.mcp.tools import TOOLS
from research_platform.logging import exception_summary, get_logger

log = get_logger(__name__)
ApiFor = Callable[[ServerRequestContext[Any, Any]], AbstractAsyncContextManager[GatewayApi]]
_RESOURCE = re.compile(r"^research://(reports|claims)/([0-9a-fA-F-]{36})$")
INSTRUCTIONS = (
    "research-engine keeps a ledger of evidence-backed claims. ask_question and verify_claim answer with "
    "verbatim quotes from the cited papers; start_review writes a peer-reviewed literature review; "
    "build_source_list collects sources. Long runs report progress; when a run outlasts wait_seconds the "
    "answer carries an id to read later (get_review, get_source_list, research://reports/{id})."
)


# What the server offers, the same for every caller.
TOOL_LIST = types.ListToolsResult(
    tools=[
        types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)
        for spec in TOOLS.values()
    ]
)
RESOURCE_TEMPLATES = types.ListResourceTemplatesResult(
    resource_templates=[
        types.ResourceTemplate(
            name="report",
            uri_template="research://reports/{id}",
            mime_type="text/markdown",
            description="A review, verification or source-list report as Markdown.",
        ),
        types.ResourceTemplate(
            name="claim",
            uri_template="research://claims/{id}",
            mime_type="application/json",
            description="A ledger claim: statement, status, supports with quotes, verdict.",
        ),
    ]
)


def _failed(reason: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=reason)], is_error=True
    )


def build_server(api_for: ApiFor, *, version: str = "0.1.0") -> Server[Any]:
    """The research-engine MCP server; `api_for(ctx)` reaches the gateway's API as the caller."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return TOOL_LIST

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            return _failed(f"unknown tool {params.name!r}: use one of {', '.join(TOOLS)}")
        arguments = params.arguments or {}
        if not isinstance(arguments, dict):
            return _failed("invalid input: the arguments must be a JSON object")

        async def progress(step: float, message: str) -> None:
            await ctx.session.report_progress(step, None, message)

        try:
            async with api_for(ctx) as api:
                result = await spec.run(api, dict(arguments), progress)
        except ToolFailure as exc:
            return _failed(exc.reason)
        except Exception as exc:  # noqa: BLE001 - a tool's bug must not end the assistant's session
            # Its type and frames only: the message and the locals may hold the raw arguments.
            log.error("mcp.tool_failed", tool=params.name, **exception_summary(exc))
            return _failed(f"internal error in {params.name}: {type(exc).__name__}")
        text = json.dumps(result, indent=2, ensure_ascii=False, default=str)
        structured = json.loads(text) if isinstance(result, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )

    async def list_resource_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return RESOURCE_TEMPLATES

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            async with api_for(ctx) as api:
                reviews = await api.call("GET", "/reviews", params={"limit": 20})
        except ToolFailure as exc:
            raise MCPError(INVALID_PARAMS, exc.reason) from None
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=f"review {r['review_id']}",
                    title=r["topic"],
                    uri=f"research://reports/{r['review_id']}",
                    mime_type="text/markdown",
                    description=f"{r['status']}, version {r['version']}",
                )
                for r in reviews
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        match = _RESOURCE.match(uri)
        if match is None:
            raise MCPError(
                INVALID_PARAMS,
                f"unknown resource {uri!r}: research://reports/{{id}} or research://claims/{{id}}",
            )
        kind, item = match.groups()
        try:
            async with api_for(ctx) as api:
                if kind == "reports":
                    report = await api.call("GET", f"/reports/{item}")
                    text = (
                        report.get("markdown")
                        or f"# {report['subject']}\n\n_{report['kind']} {report['status']}: no report yet._\n"
                    )
                    return types.ReadResourceResult(
                        contents=[
                            types.TextResourceContents(
                                uri=uri, mime_type="text/markdown", text=text
                            )
                        ]
                    )
                claim = await api.call("GET", f"/claims/{item}")
        except ToolFailure as exc:
            raise MCPError(INVALID_PARAMS, exc.reason) from None
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri,
                    mime_type="application/json",
                    text=json.dumps(claim, indent=2, ensure_ascii=False),
                )
            ]
        )

    return Server(
        "research-engine",
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
    )
