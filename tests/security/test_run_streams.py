"""Runs nobody can choose or exhaust, against the real gateway process (`edge_gateway`) on real
NATS + Postgres: every run id is the server's, drawn at random (a copied `review_id` prefix got
the victim's run id); two reports never drop each other's run events; a stream for a run nobody
accepted is a 404 at once; no stream leaves a JetStream consumer behind; `Last-Event-ID` is
bounded; one key holds at most `GATEWAY_EDGE__STREAMS_PER_KEY` streams while another is served."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
import nats
import pytest

from research_contracts.runs import ReasoningShared
from research_engine.stack import Stack
from research_runs import RunRecorder, replay
from tests.security.conftest import EDGE_ENV

pytestmark = pytest.mark.e2e
API = "/api/research/v1"
RANDOM_RUN_ID = re.compile(r"^(rv|vf|sl)-[0-9a-f]{32}$")
PER_KEY = int(EDGE_ENV["GATEWAY_EDGE__STREAMS_PER_KEY"])


async def test_a_copied_review_id_prefix_never_gets_anothers_run(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]], unique: str
) -> None:
    victim_id = uuid.uuid4()
    copied = uuid.UUID(victim_id.hex[:16] + uuid.uuid4().hex[16:])  # the first 16 hex digits
    topic = f"vitamin D and fractures {unique}"
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        first = await client.post(
            f"{API}/reviews",
            json={"review_id": str(victim_id), "topic": topic},
            headers=api_keys["researcher"],
        )
        second = await client.post(
            f"{API}/reviews",
            json={"review_id": str(copied), "topic": topic},
            headers=api_keys["researcher"],
        )
        verified = await client.post(
            f"{API}/verifications",
            json={"claim": "Aspirin reduces the risk of stroke"},
            headers=api_keys["researcher"],
        )
    assert first.status_code == second.status_code == verified.status_code == 202
    runs = [first.json()["run_id"], second.json()["run_id"], verified.json()["run_id"]]
    assert len(set(runs)) == 3, runs
    assert all(RANDOM_RUN_ID.match(r) for r in runs), runs
    assert victim_id.hex[:16] not in runs[0] and copied.hex[:16] not in runs[1]
    assert verified.json()["verification_id"].replace("-", "")[:16] not in runs[2]


async def test_two_reports_on_one_run_id_never_drop_each_others_events(
    nc: nats.NATS, unique: str
) -> None:
    """The dedup key was `<run_id>-<seq>`: a second report's events under the same run id were
    taken for repeats and dropped. It leads with the report id now."""
    js = nc.jetstream()
    run_id = f"rv-{unique}"
    for report_id in (uuid.uuid4(), uuid.uuid4()):
        recorder = RunRecorder(js, run_id, report_id=report_id)
        await recorder.reasoning(f"report {report_id}")
    stored = [event async for _, event in replay(js, run_id)]
    texts = {e.text for e in stored if isinstance(e, ReasoningShared)}
    assert [event.seq for event in stored] == [1, 1] and len(texts) == 2


async def _consumers(nc: nats.NATS) -> int:
    return (await nc.jetstream().account_info()).consumers


@asynccontextmanager
async def _open_stream(
    client: httpx.AsyncClient, path: str, headers: dict[str, str]
) -> AsyncIterator[httpx.Response]:
    """A stream opened and its first bytes read (the server is past its checks)."""
    async with client.stream("GET", path, headers=headers) as response:
        chunks = response.aiter_raw()  # held while the stream is: a dropped iterator closes it
        if response.status_code == 200:
            await chunks.__anext__()
        yield response


async def test_streams_for_unknown_runs_are_404_and_no_stream_leaves_a_consumer(
    edge_gateway: Stack, nc: nats.NATS, api_keys: dict[str, dict[str, str]], unique: str
) -> None:
    run_id = f"rv-{unique}"
    await RunRecorder(nc.jetstream(), run_id).reasoning("still running")  # a live run
    before = await _consumers(nc)
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        for i in range(40):
            started = time.monotonic()
            unknown = await client.get(
                f"{API}/runs/rv-{unique}-{i}/events", headers=api_keys["reader"]
            )
            assert unknown.status_code == 404 and time.monotonic() - started < 1.0, unknown.text
        assert await _consumers(nc) == before
        async with AsyncExitStack() as streams:
            for headers in (api_keys["reader"], api_keys["researcher"], api_keys["admin"]):
                for _ in range(PER_KEY):
                    opened = await streams.enter_async_context(
                        _open_stream(client, f"{API}/runs/{run_id}/events", headers)
                    )
                    assert opened.status_code == 200
    deadline = time.monotonic() + 10
    while await _consumers(nc) != before and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert await _consumers(nc) == before


async def test_last_event_id_is_a_bounded_integer(
    edge_gateway: Stack, nc: nats.NATS, api_keys: dict[str, dict[str, str]], unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(nc.jetstream(), run_id)
    await recorder.reasoning("one")
    await recorder.done()
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        for bad in ("abc", "-1", "1_000", "+5", "null", "7x", str(10**15), "9" * 400):
            refused = await client.get(
                f"{API}/runs/{run_id}/events",
                headers={**api_keys["reader"], "Last-Event-ID": bad},
            )
            assert refused.status_code == 422, (bad, refused.text)
        huge = await client.get(
            f"{API}/runs/{run_id}/events",
            params={"last_event_id": str(2**64)},
            headers=api_keys["reader"],
        )
        assert huge.status_code == 422
        fine = await client.get(
            f"{API}/runs/{run_id}/events",
            headers={**api_keys["reader"], "Last-Event-ID": "1"},
        )
        assert fine.status_code == 200 and "event: done" in fine.text


async def test_one_key_holds_a_bounded_number_of_streams_while_another_is_served(
    edge_gateway: Stack, nc: nats.NATS, api_keys: dict[str, dict[str, str]], unique: str
) -> None:
    run_id = f"rv-{unique}"
    await RunRecorder(nc.jetstream(), run_id).reasoning("still running")
    path = f"{API}/runs/{run_id}/events"
    hog, other = api_keys["reader"], api_keys["researcher"]
    async with (
        httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client,
        AsyncExitStack() as streams,
    ):
        held = [
            await streams.enter_async_context(_open_stream(client, path, hog))
            for _ in range(PER_KEY - 1)
        ]
        held.append(
            await streams.enter_async_context(_open_stream(client, f"{API}/events", hog))
        )  # the claim stream counts too
        assert all(r.status_code == 200 for r in held)
        refused = await client.get(path, headers=hog)
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["retry-after"]) >= 1 and "streams" in refused.json()["detail"]
        bearer = await client.get(
            path, headers={"Authorization": f"Bearer {hog['X-API-Key']}"}
        )  # the same key in another header is the same key
        assert bearer.status_code == 429
        async with _open_stream(client, path, other) as served:
            assert served.status_code == 200
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        deadline = time.monotonic() + 10  # the slots are free once the server saw the streams close
        while True:
            async with _open_stream(client, path, hog) as again:
                if again.status_code == 200 or time.monotonic() > deadline:
                    break
            await asyncio.sleep(0.2)
        assert again.status_code == 200
