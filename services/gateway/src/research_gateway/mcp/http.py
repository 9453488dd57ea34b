"""`/mcp` on the gateway: the MCP server over streamable HTTP, behind the API's own keys.

`install(app)` adds the route and runs the SDK's session manager in the app's lifespan. Each
request is admitted by `KeyGate` first: a key in `X-API-Key` or `Authorization: Bearer` that
the key store knows (no key, an unknown or a revoked one → 401 with `WWW-Authenticate`, counted
by the same failed-attempt throttle as the API's: past its limit, 429 with `Retry-After`). The
console's cookie is not accepted here, so a web page cannot drive an assistant session with a
signed-in user's key. An MCP session is
bound to the key that opened it. Tools then call the API in process with that key
(`GatewayApi.in_process`), so each route's role check, validation and de-identification apply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from research_gateway.auth import OPEN_CALLER, ApiKeys, Caller, Guard
from research_gateway.deps import SERVICE
from research_gateway.mcp.gateway_api import GatewayApi
from research_gateway.mcp.server import build_server
from research_ledger import Ledger

PATH = "/mcp"


def presented_key(headers: Any) -> str | None:
    """The API key of a request: `X-API-Key`, else an `Authorization: Bearer` token."""
    key = headers.get("x-api-key")
    if key:
        return key.strip() or None
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


async def _refuse(send: Send, detail: str, retry_after: int | None = None) -> None:
    """401 with `WWW-Authenticate`, or 429 with `Retry-After` when the throttle says to wait."""
    if retry_after is None:
        status, headers = 401, [(b"www-authenticate", b"Bearer")]
    else:
        status, headers = 429, [(b"retry-after", str(retry_after).encode())]
        detail = f"too many failed API-key checks from this address; retry in {retry_after} s"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})


class KeyGate:
    """Admits `/mcp` requests that carry a live API key (see module doc); others get a 401."""

    def __init__(self, app: FastAPI, inner: ASGIApp) -> None:
        self.app, self.inner = app, inner

    def ledger(self) -> Ledger:
        """The ledger over the session factory built in the lifespan."""
        return Ledger(self.app.state.sessions)

    async def identify(self, secret: str) -> Caller | None:
        async with self.ledger().unit_of_work(service=SERVICE) as uow:
            return await ApiKeys(uow).identify(secret)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        guard: Guard = getattr(self.app.state, "guard", Guard())
        request = Request(scope)
        secret = presented_key(request.headers)
        caller = (
            OPEN_CALLER
            if not secret and guard.open
            else (await self.identify(secret) if secret else None)
        )
        if caller is None:
            detail = (
                "unknown or revoked API key"
                if secret
                else "an API key is required (X-API-Key or Authorization: Bearer)"
            )
            wait = await guard.count_failure(self.ledger(), guard.client_of(request), secret)
            await _refuse(send, detail, wait)
            return
        # The SDK binds a session to the credential that opened it (another key gets a 404).
        scope["user"] = AuthenticatedUser(
            AccessToken(token=secret or "", client_id=str(caller.key_id), scopes=[caller.role])
        )
        await self.inner(scope, receive, send)


def _api_for(app: FastAPI) -> Callable[[ServerRequestContext[Any, Any]], Any]:
    @asynccontextmanager
    async def api_for(ctx: ServerRequestContext[Any, Any]) -> AsyncIterator[GatewayApi]:
        request = ctx.request
        key = presented_key(request.headers) if request is not None else None
        client = (
            (request.client.host, request.client.port)
            if request is not None and request.client
            else ("127.0.0.1", 0)
        )
        api = GatewayApi.in_process(app, key, client)
        try:
            yield api
        finally:
            await api.aclose()

    return api_for


def install(
    app: FastAPI, security: TransportSecuritySettings | None = None
) -> StreamableHTTPSessionManager:
    """Serve MCP at `/mcp` on `app` (not in the OpenAPI document: it is not a REST route), with the
    SDK's DNS-rebinding check on `security`'s hosts and origins (`hosts.AllowedHosts`)."""
    manager = StreamableHTTPSessionManager(
        app=build_server(_api_for(app), version=app.version), security_settings=security
    )
    gate = KeyGate(app, manager.handle_request)
    app.router.routes.append(
        Route(PATH, endpoint=gate, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    )
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        # The session manager runs in a task of its own: its anyio cancel scope must be entered and
        # left by one task, and whoever holds the lifespan (uvicorn, a test fixture whose teardown
        # runs in another task) may leave it from another.
        async with outer(running) as state:
            ready, stop = asyncio.Event(), asyncio.Event()

            async def serve() -> None:
                async with manager.run():
                    ready.set()
                    await stop.wait()

            serving = asyncio.create_task(serve(), name="mcp-session-manager")
            await asyncio.wait(
                [serving, asyncio.create_task(ready.wait())], return_when=asyncio.FIRST_COMPLETED
            )
            if serving.done():
                serving.result()  # it failed to start: raise its error here
            try:
                yield state
            finally:
                stop.set()
                await serving

    app.router.lifespan_context = lifespan
    return manager
