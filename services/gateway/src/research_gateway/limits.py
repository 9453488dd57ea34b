"""What one request may cost the gateway before a route runs: ASGIApp middleware around every route.

- `BodyCap`: a request body past `GATEWAY_EDGE__MAX_BODY_BYTES` (1 MiB) is answered 413 before it
  is read into memory — at once when `Content-Length` says so, else as soon as a chunked body
  has streamed past the cap. Every route passes it: the API, `/sign-in`, `/mcp`, the console.
  Without it FastAPI reads a whole body (and tries to parse it) before any route's key check,
  so a stranger's 100 MB grew the process by as much before the 401.
- `KeyFirst`: FastAPI reads a route's body before its dependencies run, the key check among
  them; an API request that carries no key at all (no `X-API-Key`, no `Authorization`, no
  console cookie) is handed on with an empty body instead, so the route's key check answers 401
  (counted by the failed-key throttle as always) and the body a stranger sent is never read.
  `/mcp` checks its key before reading anything (`mcp.http.KeyGate`).
- `StreamCap`: one key may hold `GATEWAY_EDGE__STREAMS_PER_KEY` event streams (`/events`,
  `/runs/{run_id}/events`) open at once in this process; one more is 429 with `Retry-After`.
  The slot is freed when the stream ends, whichever side ends it.

Each answer is JSON `{"detail": reason}`, documented on every operation (`edge.document_edge`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from research_gateway.auth import AUTH_RESPONSES, Guard
from research_gateway.deps import API
from research_gateway.signins import SESSION_COOKIE as CONSOLE_COOKIE

STREAM_PATH = re.compile(rf"^{re.escape(API)}/(?:runs/[^/]+/)?events$")
STREAM_RETRY_AFTER_S = 10  # an open stream ends when its client goes; a retry soon may find a slot
TOO_LARGE = {
    "description": "the request body is larger than the gateway accepts "
    "(`GATEWAY_EDGE__MAX_BODY_BYTES`, 1 MiB by default); it was not read"
}
TOO_MANY_STREAMS = {  # an event stream's 429: the failed-key throttle's, or the streams cap's
    **AUTH_RESPONSES[429],
    "description": f"{AUTH_RESPONSES[429]['description']}; or this key already holds as many event "
    "streams open as it may (`GATEWAY_EDGE__STREAMS_PER_KEY`): close one, or retry after "
    "`Retry-After` seconds",
}


async def answer(
    send: Send, status: int, detail: str, headers: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    """A complete JSON response `{"detail": detail}`."""
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    """The body streamed past the cap (raised from `receive`, caught by `BodyCap`)."""


class BodyCap:
    """413 for a body past `max_bytes`, before it is read (see the module docstring)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    def _refusal(self) -> str:
        return f"the request body is larger than {self.max_bytes} bytes; it was not read"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await answer(send, 413, self._refusal())
            return
        received, over, started = 0, False, False

        async def counted() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    over = True
                    raise _TooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if over:  # whatever the route makes of the interrupted read, the answer is the 413
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except Exception:
            if not over:
                raise
        if over and not started:
            await answer(send, 413, self._refusal())


def presents_credentials(headers: Headers) -> bool:
    """Whether a request carries anything a key check would read: a key header, a bearer token
    or the console's cookie (valid or not: the route's check decides)."""
    if headers.get("x-api-key") or headers.get("authorization"):
        return True
    return any(
        part.strip().startswith(f"{CONSOLE_COOKIE}=")
        for part in headers.get("cookie", "").split(";")
    )


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class KeyFirst:
    """An API request without any key reaches its route with an empty body (see the module
    docstring); open mode (`GATEWAY_AUTH__OPEN`) passes every request as it came."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] not in ("GET", "HEAD", "OPTIONS")
            and str(scope["path"]).startswith(f"{API}/")
            and not self.guard.open
            and not presents_credentials(Headers(scope=scope))
        ):
            receive = _no_body
        await self.app(scope, receive, send)


class StreamCap:
    """At most `per_key` open event streams per presented key (see the module docstring)."""

    def __init__(self, app: ASGIApp, per_key: int) -> None:
        self.app, self.per_key = app, per_key
        self.open: Counter[str] = Counter()

    @staticmethod
    def holder(headers: Headers) -> str:
        """Who holds a stream: a digest of the credential presented (the key, a bearer token, or
        the cookie), so one key's streams count together whichever header carries it."""
        scheme, _, token = (headers.get("authorization") or "").partition(" ")
        secret = (
            headers.get("x-api-key")
            or (token.strip() if scheme.lower() == "bearer" else "")
            or next(
                (
                    part.strip()[len(CONSOLE_COOKIE) + 1 :]
                    for part in headers.get("cookie", "").split(";")
                    if part.strip().startswith(f"{CONSOLE_COOKIE}=")
                ),
                "",
            )
        )
        return hashlib.sha256(secret.strip().encode()).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or not STREAM_PATH.match(str(scope["path"]))
        ):
            await self.app(scope, receive, send)
            return
        holder = self.holder(Headers(scope=scope))
        if self.open[holder] >= self.per_key:
            await answer(
                send,
                429,
                f"this key holds {self.per_key} event streams open already (the most it may); close "
                f"one or retry in {STREAM_RETRY_AFTER_S} s",
                ((b"retry-after", str(STREAM_RETRY_AFTER_S).encode()),),
            )
            return
        self.open[holder] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open[holder] -= 1
            if self.open[holder] <= 0:
                del self.open[holder]
