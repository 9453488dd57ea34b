"""Run events of long jobs: record them in order on JetStream, replay them from a stream
sequence, serve them as resumable Server-Sent Events, and tell a stale report's run why."""

from research_runs.recorder import (
    MAX_RESULTS_BYTES,
    RUN_EVENTS_ADDRESS,
    RunRecorder,
    ToolCall,
    declare_run_events,
)
from research_runs.replay import last_event, replay
from research_runs.sse import resume_point, run_events_router
from research_runs.stale import StaleNotice, tell_stale
from research_runs.stream import RUNS_STREAM_CONFIG, ensure_runs_stream

__all__ = [
    "MAX_RESULTS_BYTES",
    "RUNS_STREAM_CONFIG",
    "RUN_EVENTS_ADDRESS",
    "RunRecorder",
    "StaleNotice",
    "ToolCall",
    "declare_run_events",
    "ensure_runs_stream",
    "last_event",
    "replay",
    "resume_point",
    "run_events_router",
    "tell_stale",
]
