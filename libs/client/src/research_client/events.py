"""Following a run's Server-Sent Events with resume: the client side of `research_runs.sse`.

The gateway frames each run event as `id: <stream sequence>` / `event: <type>` / `data: <JSON>`
and ends the response after the run's `done` event. When the connection drops first, the
reader reconnects with `Last-Event-ID: <last id seen>` and the gateway resumes right after it,
so the caller sees each event once, in order.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx

from research_client.errors import ApiError
from research_client.models import RunEventItem
from research_contracts.runs import RunEventType, parse_run_event

if TYPE_CHECKING:
    from research_client.client import ResearchClient


def sse_frames(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """SSE frames (field → value; `data` lines joined) from the lines of a response body."""
    frame: dict[str, str] = {}
    for line in lines:
        if line == "":
            if frame:
                yield frame
            frame = {}
            continue
        if line.startswith(":"):
            continue  # a comment: keep-alive or the server's greeting
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        frame[name] = f"{frame[name]}\n{value}" if name == "data" and name in frame else value
    if frame:
        yield frame


def follow_run(
    client: ResearchClient,
    path: str,
    *,
    last_event_id: int | None,
    reconnect: bool,
    max_reconnects: int,
) -> Iterator[RunEventItem]:
    """Yield the run's events until `done`, reconnecting after the last id on a dropped stream."""
    last = last_event_id
    attempts = 0
    while True:
        headers = {"Last-Event-ID": str(last)} if last is not None else {}
        try:
            with client.http.stream(
                "GET", path, headers=headers, timeout=httpx.Timeout(30.0, read=None)
            ) as reply:
                if not reply.is_success:
                    reply.read()
                    raise ApiError(
                        reply.status_code,
                        reply.text[:500],
                        method="GET",
                        path=path,
                        key_from=client.credentials.key_from,
                    )
                for frame in sse_frames(reply.iter_lines()):
                    if "data" not in frame:
                        continue  # the retry hint, or a comment-only frame
                    event = parse_run_event(frame["data"])
                    seen = int(frame["id"]) if frame.get("id", "").isdigit() else None
                    if seen is not None:
                        last = seen
                    attempts = 0
                    yield RunEventItem(id=seen, event=event)
                    if event.type == RunEventType.done:
                        return
            # the server ended the response before `done`: resume like a dropped connection
        except (httpx.TransportError, httpx.RemoteProtocolError):
            pass
        attempts += 1
        if not reconnect or attempts > max_reconnects:
            raise ConnectionError(
                f"the event stream of {path} ended before the run's done event (last id {last})"
            )
        time.sleep(min(2.0, 0.2 * attempts))
