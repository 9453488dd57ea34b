"""Record a run's live trace on JetStream, in order, exactly once.

    recorder = await RunRecorder.resume(js, run_id)        # or RunRecorder(js, run_id)
    async with recorder.running():                         # error + done(failed) on exception, done otherwise
        async with recorder.agent("researcher", iteration=1, agent_id="research_literature_review_agent") as author:
            await author.reasoning("Step 1: plan 4 sub-questions")
            async with author.tool("research.search_papers", {"query": q}) as call:
                call.result = await search(q)              # tool_call now, tool_result on exit
        await recorder.verdict("PASS", iteration=1)

Order: one lock per run serialises publishing and every event waits for its PubAck, so the
stream order is the emit order. Exactly once: each event is published with `Nats-Msg-Id`
`<report_id>-<run_id>-<seq>` (`<run_id>-<seq>` for a recorder told no report) and `seq` only
advances after the ack, so a retried publish (timeout, reconnect)
is dropped by the stream's duplicate window instead of appearing twice. `resume` continues the
numbering of a run whose process restarted (a redelivered job), instead of colliding with it.

A service declares the run events it emits with `declare_run_events(broker, service)` (a
FastStream publisher on `research.run.{run_id}.event` with the `RunEvent` payload schema, so its
AsyncAPI document lists them) and hands that publisher to the recorder (`publisher=`): the events
then go through it (and the broker's publish metrics). Without one (tests, the CLI) the recorder
publishes on the JetStream context directly; the bytes, headers and ordering are the same.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from faststream.nats import JStream
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from research_contracts.runs import (
    RUNS_STREAM,
    AgentEnded,
    AgentStarted,
    ErrorRaised,
    MessageChunkStreamed,
    ReasoningShared,
    ResultReady,
    RunDone,
    RunEvent,
    ToolCalled,
    ToolProgressed,
    ToolReturned,
    VerdictReached,
    parse_run_event,
    run_event_msg_id,
    run_event_subject,
)
from research_contracts.subjects import MSG_ID_HEADER, PUBLISH_TIMEOUT_S

log = logging.getLogger(__name__)

RUN_EVENTS_ADDRESS = "research.run.{run_id}.event"  # `run_event_subject(run_id)` once filled in
MAX_RESULTS_BYTES = (
    256 * 1024
)  # tool results beyond this are trimmed (the stream caps a message at 512 KiB)


@dataclass
class _Tape:
    """What every view of one run shares: the connection, the sequence and the lock."""

    js: JetStreamContext
    run_id: str
    subject: str
    publisher: Any = (
        None  # a declared FastStream publisher (`declare_run_events`), or None: `js` directly
    )
    report_id: Any = None  # the report the run writes (leads every event's `Nats-Msg-Id`)
    last_seq: int = 0
    tool_calls: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def declare_run_events(broker: Any, service: str) -> Any:
    """Declare on `broker` (a FastStream `NatsBroker`) the run events `service` publishes; returns
    the publisher to hand to `RunRecorder(..., publisher=...)`. The stream is not declared by
    FastStream (`declare=False`): `ensure_streams` owns its configuration, and FastStream's own
    declaration would overwrite it with defaults (no `allow_direct`, no limits), which breaks
    every replay and resume of a run (a direct get then has no responders)."""
    return broker.publisher(
        RUN_EVENTS_ADDRESS,
        stream=JStream(RUNS_STREAM, declare=False),
        timeout=PUBLISH_TIMEOUT_S,
        schema=RunEvent,
        title=f"{service}.run_events",
        description=(
            "The live trace of a run, one event per message in emit order (`RunEvent`, told apart by "
            "`type`; `Nats-Msg-Id` `<report_id>-<run_id>-<seq>`: a retried publish is stored once); replayed "
            "as SSE "
            "by the gateway's /runs/{run_id}/events."
        ),
    )


def _trim(results: Any, limit: int) -> tuple[Any, bool]:
    """`results`, or a prefix of it that fits `limit` bytes of JSON (with `truncated=True`)."""
    encoded = json.dumps(results, default=str)
    if len(encoded) <= limit:
        return json.loads(encoded), False
    if isinstance(results, list):
        kept: list[Any] = []
        size = 2
        for item in results:
            item_size = len(json.dumps(item, default=str)) + 1
            if size + item_size > limit:
                break
            kept.append(item)
            size += item_size
        return json.loads(json.dumps(kept, default=str)), True
    return {"preview": encoded[: limit // 2]}, True


class ToolCall:
    """One recorded tool call; set `result` (or let an exception escape) before the block ends."""

    def __init__(self, recorder: RunRecorder, tool_call_id: str, tool_id: str) -> None:
        self.recorder = recorder
        self.tool_call_id = tool_call_id
        self.tool_id = tool_id
        self.result: Any = None

    async def progress(self, message: str) -> int:
        """Emit `tool_progress` for this call."""
        return await self.recorder.emit(
            ToolProgressed(
                run_id=self.recorder.run_id, tool_call_id=self.tool_call_id, message=message
            )
        )


class RunRecorder:
    """Publishes the events of one run. Views made by `agent()` share its sequence and lock and
    fill in `agent` / `iteration` for every event they emit."""

    def __init__(
        self,
        js: JetStreamContext,
        run_id: str,
        *,
        agent: str = "orchestrator",
        iteration: int = 1,
        last_seq: int = 0,
        max_results_bytes: int = MAX_RESULTS_BYTES,
        publisher: Any = None,
        report_id: Any = None,
        _tape: _Tape | None = None,
    ) -> None:
        self._tape = _tape or _Tape(
            js,
            run_id,
            run_event_subject(run_id),
            publisher=publisher,
            report_id=report_id,
            last_seq=last_seq,
        )
        self.agent_name = agent
        self.iteration = iteration
        self.max_results_bytes = max_results_bytes

    @classmethod
    async def resume(cls, js: JetStreamContext, run_id: str, **kwargs: Any) -> RunRecorder:
        """A recorder that continues after the last event already stored for `run_id` (none → 1)."""
        last_seq = 0
        try:
            raw = await js.get_msg(RUNS_STREAM, subject=run_event_subject(run_id), direct=True)
            last_seq = parse_run_event(raw.data or b"").seq
        except NotFoundError:
            pass
        return cls(js, run_id, last_seq=last_seq, **kwargs)

    @property
    def run_id(self) -> str:
        return self._tape.run_id

    @property
    def last_seq(self) -> int:
        """The recorder sequence of the last event acknowledged by the stream."""
        return self._tape.last_seq

    async def emit(self, event: RunEvent) -> int:
        """Publish `event` as the run's next event and return its **stream** sequence (the SSE
        id). `agent` / `iteration` left at their defaults take this view's values."""
        tape = self._tape
        updates: dict[str, Any] = {"run_id": tape.run_id}
        if "agent" not in event.model_fields_set:
            updates["agent"] = self.agent_name
        if "iteration" not in event.model_fields_set:
            updates["iteration"] = self.iteration
        async with tape.lock:
            seq = tape.last_seq + 1
            stamped = event.model_copy(update={**updates, "seq": seq})
            body, headers = (
                stamped.model_dump_json().encode(),
                {MSG_ID_HEADER: run_event_msg_id(tape.run_id, seq, tape.report_id)},
            )
            if tape.publisher is not None:
                ack = await tape.publisher.publish(
                    body, subject=tape.subject, stream=RUNS_STREAM, headers=headers
                )
            else:
                ack = await tape.js.publish(tape.subject, body, stream=RUNS_STREAM, headers=headers)
            if ack.duplicate:
                log.warning(
                    "run event %s-%s was already stored; not stored twice", tape.run_id, seq
                )
            tape.last_seq = seq
            return int(ack.seq)

    def _bound(self, agent: str | None, iteration: int | None) -> RunRecorder:
        return RunRecorder(
            self._tape.js,
            self._tape.run_id,
            agent=agent or self.agent_name,
            iteration=self.iteration if iteration is None else iteration,
            max_results_bytes=self.max_results_bytes,
            _tape=self._tape,
        )

    # --- scopes ------------------------------------------------------------------------------
    @asynccontextmanager
    async def agent(
        self, agent: str, *, iteration: int | None = None, agent_id: str | None = None
    ) -> AsyncIterator[RunRecorder]:
        """`agent_start` now, `agent_end` when the block ends; an exception is recorded as
        `error` and `agent_end(ok=False)`, then re-raised."""
        view = self._bound(agent, iteration)
        await view.emit(AgentStarted(run_id=self.run_id, agent_id=agent_id))
        try:
            yield view
        except BaseException as exc:
            await view.emit(
                ErrorRaised(run_id=self.run_id, message=f"{type(exc).__name__}: {exc}"[:2000])
            )
            await view.emit(AgentEnded(run_id=self.run_id, ok=False))
            raise
        await view.emit(AgentEnded(run_id=self.run_id, ok=True))

    @asynccontextmanager
    async def tool(
        self, tool_id: str, params: dict[str, Any] | None = None
    ) -> AsyncIterator[ToolCall]:
        """`tool_call` now, `tool_result` (with `call.result`, or the error) when the block ends."""
        self._tape.tool_calls += 1
        call = ToolCall(self, f"tc-{self._tape.tool_calls}", tool_id)
        await self.emit(
            ToolCalled(
                run_id=self.run_id,
                tool_call_id=call.tool_call_id,
                tool_id=tool_id,
                params=params or {},
            )
        )
        try:
            yield call
        except BaseException as exc:
            await self.emit(
                ToolReturned(
                    run_id=self.run_id,
                    tool_call_id=call.tool_call_id,
                    tool_id=tool_id,
                    error=f"{type(exc).__name__}: {exc}"[:2000],
                )
            )
            raise
        results, truncated = _trim(call.result, self.max_results_bytes)
        await self.emit(
            ToolReturned(
                run_id=self.run_id,
                tool_call_id=call.tool_call_id,
                tool_id=tool_id,
                results=results,
                truncated=truncated,
            )
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[RunRecorder]:
        """The whole run: always ends with `done` — `completed`, or `failed` after an `error`."""
        try:
            yield self
        except BaseException as exc:
            await self.error(f"{type(exc).__name__}: {exc}"[:2000])
            await self.done(status="failed")
            raise
        await self.done()

    # --- single events -------------------------------------------------------------------------
    async def reasoning(self, text: str) -> int:
        return await self.emit(ReasoningShared(run_id=self.run_id, text=text))

    async def message_chunk(self, text: str) -> int:
        return await self.emit(MessageChunkStreamed(run_id=self.run_id, text=text))

    async def verdict(
        self,
        verdict: str,
        *,
        confidence: str | None = None,
        details: dict[str, Any] | None = None,
        iteration: int | None = None,
    ) -> int:
        event = VerdictReached(
            run_id=self.run_id, verdict=verdict, confidence=confidence, details=details or {}
        )
        if iteration is not None:
            event.iteration = iteration
        return await self.emit(event)

    async def result(
        self,
        *,
        report: dict[str, Any] | None = None,
        review: dict[str, Any] | None = None,
        iteration_info: list[dict[str, Any]] | None = None,
        iterations: int = 1,
    ) -> int:
        return await self.emit(
            ResultReady(
                run_id=self.run_id,
                report=report,
                review=review,
                iteration_info=iteration_info or [],
                iterations=iterations,
            )
        )

    async def error(self, message: str) -> int:
        return await self.emit(ErrorRaised(run_id=self.run_id, message=message))

    async def done(self, *, status: str = "completed") -> int:
        return await self.emit(RunDone(run_id=self.run_id, status=status))
