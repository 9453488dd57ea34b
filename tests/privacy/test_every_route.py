"""Invented patients through every route of the running stack; nothing identifying leaves, rests or rides the bus.

The services run as separate processes on the session's real NATS + Postgres, with every outside
source and the OpenAI-compatible provider pointed at a local server that records what it
receives (`bench/harness/privacy_routes.py`). Three patients go in through a task with `patient_ref`, a
review topic, a verification with `watch` and a source list with keywords and `save_to`. Then: no
identifier in any recorded request, in any table (every table of the schema, from
`information_schema`), or in any message any stream keeps (every stream but the dead letters,
which keep bodies by design) — and every run still completes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.harness.privacy_routes import (
    Recorder,
    bus_leaks,
    leaks,
    recording_server,
    request_leaks,
    stack_env,
    stored_leaks,
    submit_every_route,
    wait_every_route,
)
from bench.harness.servers import Servers
from bench.harness.stack import DEMO_CORPUS, running_stack
from research_engine.stack import Stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with (
        recording_server() as url,
        running_stack(servers, tmp_path_factory, extra_env=stack_env(url)) as running,
    ):
        yield running


def test_the_patients_are_not_in_the_demo_corpus() -> None:
    """The scans below look for these values anywhere: none of them may occur in the literature itself."""
    assert leaks(DEMO_CORPUS.read_text(encoding="utf-8")) == []


async def test_no_identifier_leaves_rests_or_rides_the_bus_on_any_route(
    stack: Stack, servers: Servers, sessions: async_sessionmaker[AsyncSession]
) -> None:
    Recorder.received.clear()
    with httpx.Client(base_url=stack.gateway_url, headers=stack.api_headers, timeout=30) as client:
        accepted = submit_every_route(client)
        assert {r: a.status_code for r, a in accepted.items()} == dict.fromkeys(accepted, 202), [
            a.text for a in accepted.values()
        ]
        assert (
            leaks(json.dumps([a.json() for a in accepted.values()])) == []
        )  # what the caller is shown back
        finished = wait_every_route(client, accepted)
    # the runs complete: the clinical question survives de-identification
    assert {r: f.get("status") for r, f in finished.items()} == {
        "tasks": "claimed",
        "reviews": "completed",
        "verifications": "completed",
        "source-lists": "completed",
    }, finished
    assert (
        "lactic acidosis" in finished["tasks"]["question"]
        and "[NAME_1]" in finished["tasks"]["question"]
    )

    # out of the process: every request the outside sources and the model received
    assert any("/chat/completions" in r for r in Recorder.received)  # the model was asked
    assert any(
        "/chat/completions" not in r for r in Recorder.received
    )  # and outside sources were searched
    assert request_leaks() == []
    # at rest: every table of the schema
    tables, stored = await stored_leaks(sessions)
    assert tables > 15 and stored == {}
    # on the bus: every message every stream keeps
    messages, on_bus = await bus_leaks(servers.nats_url)
    assert messages > 0 and on_bus == {}
