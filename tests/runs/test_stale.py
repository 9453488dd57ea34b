"""`tell_stale` on a real nats-server: each stale report's run ends with `STALE` and `done`, after
the events it already had, and one run that cannot be told does not keep the others from it."""

from __future__ import annotations

import pytest
from nats.js import JetStreamContext

from research_contracts.runs import VerdictReached
from research_runs import RunRecorder, StaleNotice, replay, tell_stale

pytestmark = pytest.mark.integration


async def test_each_run_hears_stale_then_done_and_a_bad_one_is_skipped(
    js: JetStreamContext, unique: str
) -> None:
    finished, fresh = f"rv-{unique}-a", f"vf-{unique}-b"
    recorder = RunRecorder(js, finished)
    async with recorder.running():
        await recorder.reasoning("the review was written")
    notices = [
        StaleNotice(finished, {"report_id": "r-1", "reason": "cited source doi:x retracted"}),
        StaleNotice("not.one.token", {"report_id": "r-2", "reason": "never told"}),
        StaleNotice(fresh, {"report_id": "r-3", "reason": "claim withdrawn"}),
    ]

    assert await tell_stale(js, notices, at_once=2) == 2

    first = [e async for _, e in replay(js, finished)]
    assert [e.type for e in first][-2:] == ["verdict", "done"]
    stale = first[-2]
    assert isinstance(stale, VerdictReached)
    assert stale.verdict == "STALE" and stale.details == notices[0].details
    assert [e.seq for e in first] == list(range(1, len(first) + 1))  # continued, not restarted
    second = [e async for _, e in replay(js, fresh)]
    assert [(e.type, e.seq) for e in second] == [("verdict", 1), ("done", 2)]
    told = second[0]
    assert isinstance(told, VerdictReached)
    assert told.details == {"report_id": "r-3", "reason": "claim withdrawn"}
