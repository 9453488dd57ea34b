"""The gateway's HTTP API as the MCP tools see it: one client, two ways to reach the gateway.

`GatewayApi.over_http(url, key)` talks to a gateway over the network (the stdio server of
`research-engine mcp`); `GatewayApi.in_process(app, key)` calls the same FastAPI app inside the
gateway process (the `/mcp` endpoint), through `StreamingASGITransport`, which hands a response
over as soon as its headers are sent, so a run's Server-Sent Events stream live. Either way a
tool's request passes the API's own validation, de-identification and role checks with the
caller's key; a non-2xx answer becomes a `ToolFailure` carrying the gateway's reason.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Any

import httpx

from research_contracts.runs import RunEvent, parse_run_event

API = "/api/research/v1"


class ToolFailure(Exception):
    """A tool could not do what it was asked; `reason` is shown to the assistant as the tool's error."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


def _reason(status: int, detail: Any) -> str:
    """A one-line reason from the API's `detail` (a string, a 422's list of errors, an object)."""
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if isinstance(item, dict):
                where = ".".join(
                    str(p) for p in item.get("loc", ()) if p not in ("body", "query", "path")
                )
                parts.append(
                    f"{where}: {item.get('msg', item)}" if where else str(item.get("msg", item))
                )
            else:
                parts.append(str(item))
        detail = "; ".join(parts)
    elif isinstance(detail, dict):
        detail = detail.get("detail") or json.dumps(detail, default=str)
    prefix = {
        401: "refused (401)",
        403: "refused (403)",
        404: "not found",
        409: "conflict",
        422: "invalid input",
        503: "unavailable",
        504: "timed out",
    }.get(status, f"HTTP {status}")
    return f"{prefix}: {detail}"


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """An httpx transport calling an ASGI app in this process, streaming the response body.

    httpx's own `ASGITransport` waits for the whole body, which never comes for a live event
    stream. Here the app runs as a task; the response is returned at `http.response.start` and
    its body is read from a queue as the app sends it. Closing the response early tells the app
    the client disconnected and waits for it to finish.
    """

    def __init__(self, app: Any, client: tuple[str, int] = ("127.0.0.1", 0)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port or 80),
            "client": self.client,
            "root_path": "",
        }
        started: asyncio.Future[tuple[int, list[tuple[bytes, bytes]]]] = (
            asyncio.get_running_loop().create_future()
        )
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        disconnected = asyncio.Event()
        sent_body = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                started.set_result((message["status"], message.get("headers", [])))
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    chunks.put_nowait(message["body"])
                if not message.get("more_body", False):
                    chunks.put_nowait(None)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except Exception as exc:
                if not started.done():
                    started.set_exception(exc)
                raise
            finally:
                chunks.put_nowait(None)

        task = asyncio.create_task(run())
        try:
            status, headers = await asyncio.shield(started)
        except BaseException:
            disconnected.set()
            task.cancel()
            raise
        return httpx.Response(
            status, headers=headers, stream=_QueueStream(chunks, disconnected, task)
        )


class _QueueStream(httpx.AsyncByteStream):
    def __init__(
        self,
        chunks: asyncio.Queue[bytes | None],
        disconnected: asyncio.Event,
        task: asyncio.Task[None],
    ) -> None:
        self.chunks, self.disconnected, self.task = chunks, disconnected, task

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (chunk := await self.chunks.get()) is not None:
            yield chunk

    async def aclose(self) -> None:
        self.disconnected.set()
        if not self.task.done():
            with suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self.task), timeout=5)
            self.task.cancel()


def _sse_frames(lines: list[str]) -> dict[str, str]:
    frame: dict[str, str] = {}
    for line in lines:
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        frame[name] = f"{frame[name]}\n{value}" if name == "data" and name in frame else value
    return frame


class GatewayApi:
    """The gateway's API with one caller's key (`X-API-Key`)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    @classmethod
    def over_http(cls, url: str, key: str | None, timeout: float = 30.0) -> GatewayApi:
        headers = {"X-API-Key": key} if key else {}
        return cls(httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=timeout))

    @classmethod
    def in_process(
        cls, app: Any, key: str | None, client: tuple[str, int] = ("127.0.0.1", 0)
    ) -> GatewayApi:
        headers = {"X-API-Key": key} if key else {}
        # Host `localhost`: the app's own `HostGuard` admits loopback names only (and public ones).
        return cls(
            httpx.AsyncClient(
                transport=StreamingASGITransport(app, client),
                base_url="http://localhost",
                headers=headers,
                timeout=30.0,
            )
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None
    ) -> Any:
        """The JSON answer of `method path`; a non-2xx answer raises `ToolFailure` with its reason."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            reply = await self.http.request(method, API + path, params=query, json=body)
        except httpx.HTTPError as exc:
            raise ToolFailure(
                f"the gateway could not be reached ({type(exc).__name__}: {exc})"
            ) from exc
        if reply.is_success:
            return reply.json() if reply.content else None
        try:
            detail = reply.json().get("detail", reply.text)
        except ValueError:
            detail = reply.text[:500]
        raise ToolFailure(_reason(reply.status_code, detail), reply.status_code)

    async def events(
        self, run_id: str, after: int | None = None
    ) -> AsyncIterator[tuple[int, RunEvent]]:
        """The run's events (stream sequence, event) from `GET /runs/{run_id}/events`, until `done`."""
        headers = {"Last-Event-ID": str(after)} if after else {}
        timeout = httpx.Timeout(30.0, read=None)
        async with self.http.stream(
            "GET", f"{API}/runs/{run_id}/events", headers=headers, timeout=timeout
        ) as reply:
            if not reply.is_success:
                await reply.aread()
                try:
                    detail = reply.json().get("detail", reply.text)
                except ValueError:
                    detail = reply.text[:500]
                raise ToolFailure(_reason(reply.status_code, detail), reply.status_code)
            lines: list[str] = []
            async for line in reply.aiter_lines():
                if line:
                    lines.append(line)
                    continue
                frame, lines = _sse_frames(lines), []
                if "data" not in frame:
                    continue
                event = parse_run_event(frame["data"])
                yield int(frame.get("id") or 0), event
                if event.type == "done":
                    return
