"""The run-events SSE route over real HTTP (uvicorn) and a real nats-server: ids are stream
sequences, the stream ends after `done`, a reconnect with Last-Event-ID loses nothing and
repeats nothing, an unknown run is a 404 and a reader holds no consumer."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from nats.js import JetStreamContext

from research_runs import RunRecorder, replay, run_events_router

pytestmark = pytest.mark.integration


@dataclass
class Frame:
    id: str | None = None
    event: str | None = None
    data: list[str] = field(default_factory=list)

    @property
    def payload(self) -> dict:
        return json.loads("\n".join(self.data))


async def frames(response: httpx.Response) -> AsyncGenerator[Frame, None]:
    """Parse `text/event-stream` by the spec: fields until a blank line; comments ignored."""
    frame = Frame()
    async for line in response.aiter_lines():
        if line == "":
            if frame.id is not None or frame.event is not None or frame.data:
                yield frame
            frame = Frame()
        elif line.startswith((":", "retry:")):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                frame.id = value
            elif name == "event":
                frame.event = value
            elif name == "data":
                frame.data.append(value)


ACCEPTED: set[str] = set()  # runs the "ledger" knows before they record an event


async def accepted(run_id: str) -> bool:
    return run_id in ACCEPTED


@pytest.fixture
async def base_url(js: JetStreamContext) -> AsyncIterator[str]:
    app = FastAPI()
    app.include_router(run_events_router(lambda: js, known=accepted, follow_s=lambda: 20.0))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/api/research/v1"
    server.should_exit = True
    await task
    sock.close()


async def test_a_finished_run_streams_every_event_with_stream_sequence_ids_and_ends(
    js: JetStreamContext, base_url: str, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    async with recorder.running(), recorder.agent("researcher") as author:
        await author.reasoning("plan")
    stored = [item async for item in replay(js, run_id)]
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("GET", f"{base_url}/runs/{run_id}/events") as response,
    ):
        assert response.status_code == 200 and response.headers["content-type"].startswith(
            "text/event-stream"
        )
        received = [f async for f in frames(response)]  # ends by itself after `done`
    assert [(f.id, f.event) for f in received] == [(str(seq), e.type) for seq, e in stored]
    assert received[1].payload["text"] == "plan" and received[1].payload["agent"] == "researcher"


async def test_reconnect_with_last_event_id_resumes_without_loss_or_repeat(
    js: JetStreamContext, base_url: str, unique: str
) -> None:
    run_id = f"rv-{unique}"
    ACCEPTED.add(run_id)  # accepted, not started: the client connects before the first event
    recorder = RunRecorder(js, run_id)
    first: list[Frame] = []
    async with httpx.AsyncClient(timeout=30) as client:
        async with client.stream("GET", f"{base_url}/runs/{run_id}/events") as response:
            stream = frames(response)
            await recorder.reasoning("step 1")  # published while the client is connected: live
            await recorder.reasoning("step 2")
            async for frame in stream:
                first.append(frame)
                if len(first) == 2:
                    break  # the client drops the connection here
            await stream.aclose()
        # While nobody is connected the run goes on.
        async with (
            recorder.agent("researcher") as author,
            author.tool("research.search_papers", {"query": "q"}) as call,
        ):
            call.result = []
        await recorder.done()
        last_id = first[-1].id
        assert last_id is not None
        async with client.stream(
            "GET", f"{base_url}/runs/{run_id}/events", headers={"Last-Event-ID": last_id}
        ) as response:
            second = [f async for f in frames(response)]
    stored = [(str(seq), e.type) for seq, e in [item async for item in replay(js, run_id)]]
    assert [(f.id, f.event) for f in first + second] == stored
    assert [f.event for f in second] == [
        "agent_start",
        "tool_call",
        "tool_result",
        "agent_end",
        "done",
    ]
    assert [f.payload["text"] for f in first] == ["step 1", "step 2"]


async def test_query_parameter_resumes_a_first_connection(
    js: JetStreamContext, base_url: str, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    seq_1 = await recorder.reasoning("one")
    await recorder.reasoning("two")
    await recorder.done()
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream(
            "GET", f"{base_url}/runs/{run_id}/events", params={"last_event_id": seq_1}
        ) as response,
    ):
        assert [f.event for f in [f async for f in frames(response)]] == ["reasoning", "done"]


async def test_reconnecting_after_done_ends_at_once(
    js: JetStreamContext, base_url: str, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    done_seq = await recorder.done()
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream(
            "GET", f"{base_url}/runs/{run_id}/events", headers={"Last-Event-ID": str(done_seq)}
        ) as response,
    ):
        assert [f async for f in frames(response)] == []


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/runs/bad.run/events", {}),
        ("/runs/ok-run/events", {"Last-Event-ID": "abc"}),
        ("/runs/ok-run/events", {"Last-Event-ID": "-3"}),
        ("/runs/ok-run/events?last_event_id=-1", {}),
        ("/runs/ok-run/events", {"Last-Event-ID": "1_000"}),
        ("/runs/ok-run/events", {"Last-Event-ID": "+5"}),
        ("/runs/ok-run/events", {"Last-Event-ID": str(10**15)}),
        ("/runs/ok-run/events", {"Last-Event-ID": "null"}),
        ("/runs/ok-run/events", {"Last-Event-ID": "9" * 400}),
        ("/runs/ok-run/events?last_event_id=1000000000000000", {}),
    ],
)
async def test_malformed_run_id_or_resume_point_is_422(
    base_url: str, path: str, headers: dict[str, str]
) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.get(base_url + path, headers=headers)
    assert response.status_code == 422


async def test_a_run_nothing_was_recorded_or_accepted_under_is_404_at_once(
    js: JetStreamContext, base_url: str, unique: str
) -> None:
    async with httpx.AsyncClient(timeout=5) as client:
        response = await client.get(f"{base_url}/runs/rv-{unique}/events")
    assert response.status_code == 404, response.text


async def test_a_stream_ends_after_its_lifetime_and_resumes_where_it_ended(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    await recorder.reasoning("one")
    app = FastAPI()
    app.include_router(run_events_router(lambda: js, follow_s=lambda: 0.5))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=10) as client:
        async with client.stream("GET", f"/api/research/v1/runs/{run_id}/events") as response:
            first = [f async for f in frames(response)]  # ends by itself, no `done` yet
        await recorder.done()
        async with client.stream(
            "GET",
            f"/api/research/v1/runs/{run_id}/events",
            headers={"Last-Event-ID": first[-1].id or ""},
        ) as response:
            second = [f async for f in frames(response)]
    assert [f.event for f in first] == ["reasoning"] and [f.event for f in second] == ["done"]


async def test_a_client_that_disconnects_mid_run_leaves_no_consumer_behind(
    js: JetStreamContext, base_url: str, unique: str
) -> None:
    from research_contracts.runs import RUNS_STREAM

    async def consumers() -> int:
        return (await js.stream_info(RUNS_STREAM)).state.consumer_count

    before = await consumers()
    run_id = f"rv-{unique}"
    await RunRecorder(js, run_id).reasoning("still running")
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("GET", f"{base_url}/runs/{run_id}/events") as response,
    ):
        async for _ in frames(response):
            assert await consumers() == before  # the live reader reads by direct gets
            break
    for _ in range(200):  # the server notices the disconnect on its own schedule
        if await consumers() == before:
            break
        await asyncio.sleep(0.05)
    assert await consumers() == before
