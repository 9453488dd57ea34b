"""Run events on a real nats-server: recorded in order with de-duplicating message ids, paired
agent/tool events, and replayed from any stream sequence without loss or repeats."""

from __future__ import annotations

import asyncio

import pytest
from nats.js import JetStreamContext

from research_contracts.runs import (
    RUNS_STREAM,
    ReasoningShared,
    run_event_msg_id,
    run_event_subject,
)
from research_runs import RUNS_STREAM_CONFIG, RunRecorder, last_event, replay

pytestmark = pytest.mark.integration


async def _all(js: JetStreamContext, run_id: str, after: int = 0) -> list:
    return [item async for item in replay(js, run_id, after)]


async def test_stream_has_limits(js: JetStreamContext) -> None:
    info = await js.stream_info(RUNS_STREAM)
    assert RUNS_STREAM_CONFIG.max_age is not None and RUNS_STREAM_CONFIG.max_bytes is not None
    assert info.config.max_age == RUNS_STREAM_CONFIG.max_age > 0
    assert info.config.max_msgs_per_subject == RUNS_STREAM_CONFIG.max_msgs_per_subject > 0
    assert info.config.max_bytes == RUNS_STREAM_CONFIG.max_bytes > 0
    assert info.config.allow_direct


async def test_a_review_shaped_run_is_recorded_in_order_with_pairs(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    async with recorder.running():
        async with recorder.agent(
            "researcher", iteration=1, agent_id="research_literature_review_agent"
        ) as author:
            await author.reasoning("Step 1: plan 3 sub-questions")
            async with author.tool(
                "research.search_papers", {"query": "vitamin D fracture"}
            ) as call:
                await call.progress("searching chunks")
                call.result = [{"paper_id": "corpus:1", "score": 0.9}]
            await author.message_chunk("# Vitamin D")
        async with recorder.agent("peer_reviewer", iteration=1) as reviewer:
            await reviewer.verdict("PASS", details={"issues": []})
        await recorder.result(report={"title": "Vitamin D"}, iterations=1)
    events = await _all(js, run_id)
    assert [e.type for _, e in events] == [
        "agent_start",
        "reasoning",
        "tool_call",
        "tool_progress",
        "tool_result",
        "message_chunk",
        "agent_end",
        "agent_start",
        "verdict",
        "agent_end",
        "result",
        "done",
    ]
    stream_seqs = [s for s, _ in events]
    assert stream_seqs == sorted(stream_seqs) and len(set(stream_seqs)) == len(stream_seqs)
    assert [e.seq for _, e in events] == list(range(1, 13))
    assert {e.agent for _, e in events[:7]} == {"researcher"} and events[8][
        1
    ].agent == "peer_reviewer"
    call, progress, result = events[2][1], events[3][1], events[4][1]
    assert call.tool_call_id == progress.tool_call_id == result.tool_call_id
    assert result.results == [{"paper_id": "corpus:1", "score": 0.9}] and result.error is None
    assert all(e.run_id == run_id for _, e in events)


async def test_failures_are_recorded_and_the_run_still_ends_with_done(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    with pytest.raises(RuntimeError):
        async with (
            recorder.running(),
            recorder.agent("researcher") as author,
            author.tool("research.top_cited", {"topic": "x"}),
        ):
            raise RuntimeError("connector down")
    events = [e for _, e in await _all(js, run_id)]
    assert [e.type for e in events] == [
        "agent_start",
        "tool_call",
        "tool_result",
        "error",
        "agent_end",
        "error",
        "done",
    ]
    assert events[2].error == "RuntimeError: connector down" and events[4].ok is False
    assert events[-1].status == "failed"


async def test_concurrent_emitters_keep_recorder_order_equal_to_stream_order(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    await asyncio.gather(*(recorder.reasoning(f"step {i}") for i in range(40)))
    events = await _all(js, run_id)
    assert [e.seq for _, e in events] == list(range(1, 41))


async def test_a_republished_event_is_stored_once(js: JetStreamContext, unique: str) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    await recorder.reasoning("first")
    # A publish retried after a lost ack carries the same Nats-Msg-Id: the stream drops it.
    duplicate = ReasoningShared(run_id=run_id, text="first", seq=1)
    ack = await js.publish(
        run_event_subject(run_id),
        duplicate.model_dump_json().encode(),
        stream=RUNS_STREAM,
        headers={"Nats-Msg-Id": run_event_msg_id(run_id, 1)},
    )
    assert ack.duplicate
    assert len(await _all(js, run_id)) == 1


async def test_resume_continues_numbering_after_a_restart(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    first = RunRecorder(js, run_id)
    await first.reasoning("before the crash")
    await first.reasoning("still before")
    again = await RunRecorder.resume(js, run_id)
    assert again.last_seq == 2
    await again.reasoning("after the restart")  # with seq 1 it would be dropped as a duplicate
    texts = [e.text for _, e in await _all(js, run_id)]
    assert texts == ["before the crash", "still before", "after the restart"]


async def test_replay_from_any_sequence_loses_and_repeats_nothing(
    js: JetStreamContext, unique: str
) -> None:
    run_a, run_b = f"rv-{unique}-a", f"rv-{unique}-b"
    rec_a, rec_b = RunRecorder(js, run_a), RunRecorder(js, run_b)
    for i in range(6):  # interleaved runs: stream sequences of one run are not contiguous
        await rec_a.reasoning(f"a{i}")
        await rec_b.reasoning(f"b{i}")
    full = await _all(js, run_a)
    assert [e.text for _, e in full] == [f"a{i}" for i in range(6)]
    for cut in range(len(full)):
        after = full[cut][0]
        rest = await _all(js, run_a, after)
        assert [s for s, _ in rest] == [s for s, _ in full[cut + 1 :]]
    assert await _all(js, run_a, full[-1][0]) == []
    newest = await last_event(js, run_a)
    assert newest is not None and newest[0] == full[-1][0]
    assert isinstance(newest[1], ReasoningShared) and newest[1].text == "a5"


async def test_follow_waits_for_live_events_and_stops_after_done(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    await recorder.reasoning("already there")
    seen: list[str] = []
    first_seen = asyncio.Event()

    async def read() -> None:
        async for _, event in replay(js, run_id, follow=True):
            seen.append(event.type)
            first_seen.set()

    reader = asyncio.create_task(read())
    await first_seen.wait()
    await recorder.reasoning("live")
    await recorder.done()
    await reader  # returns by itself after `done`
    assert seen == ["reasoning", "reasoning", "done"]


async def test_follow_after_the_end_of_a_finished_run_returns_at_once(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id)
    await recorder.reasoning("x")
    done_seq = await recorder.done()
    assert [item async for item in replay(js, run_id, done_seq, follow=True)] == []


async def test_large_tool_results_are_trimmed_to_fit_one_message(
    js: JetStreamContext, unique: str
) -> None:
    run_id = f"rv-{unique}"
    recorder = RunRecorder(js, run_id, max_results_bytes=2_000)
    async with recorder.tool("research.search_papers", {"query": "q"}) as call:
        call.result = [{"chunk": "x" * 100, "i": i} for i in range(100)]
    result = (await _all(js, run_id))[-1][1]
    assert result.truncated and 0 < len(result.results) < 100


async def test_a_recorder_given_the_declared_publisher_sends_through_it(
    servers, js: JetStreamContext, unique: str
) -> None:
    """What a service does (`declare_run_events`): the same ordered, de-duplicated events, and the
    broker's middlewares see every publish (its metrics count them under one subject label)."""
    from faststream.nats import NatsBroker

    from research_platform.metrics import subject_label
    from research_runs import declare_run_events

    broker = NatsBroker(servers.nats_url)
    publisher = declare_run_events(broker, "test")
    seen: list[str] = []
    real_publish = publisher.publish

    async def counted(message, **kwargs):
        seen.append(subject_label(kwargs["subject"]))
        return await real_publish(message, **kwargs)

    publisher.publish = counted
    await broker.connect()
    try:
        run_id = f"rv-{unique}"
        recorder = RunRecorder(js, run_id, publisher=publisher)
        async with recorder.running(), recorder.agent("researcher") as author:
            await author.reasoning("through the publisher")
        again = await RunRecorder.resume(js, run_id, publisher=publisher)
        await again.reasoning("after a restart")
    finally:
        await broker.stop()
    events = [e for _, e in await _all(js, run_id)]
    assert [e.type for e in events] == [
        "agent_start",
        "reasoning",
        "agent_end",
        "done",
        "reasoning",
    ]
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert seen == ["research.run.*.event"] * 5


async def test_starting_a_service_broker_leaves_the_runs_stream_as_configured(
    servers, js: JetStreamContext
) -> None:
    """A started broker with the run events declared must not re-declare the stream: FastStream's
    declaration replaced the configuration with its defaults (no `allow_direct`, no limits), and
    every replay and resume of a run then failed with NoRespondersError (the demo's review,
    verification and source list were dead-lettered)."""
    from faststream.nats import NatsBroker

    from research_runs import declare_run_events

    broker = NatsBroker(servers.nats_url)
    declare_run_events(broker, "test")
    await broker.start()
    try:
        config = (await js.stream_info(RUNS_STREAM)).config
    finally:
        await broker.stop()
    assert config.allow_direct and config.max_age == RUNS_STREAM_CONFIG.max_age
    assert config.max_msgs_per_subject == RUNS_STREAM_CONFIG.max_msgs_per_subject
