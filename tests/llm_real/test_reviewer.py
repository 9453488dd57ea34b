"""The reviewer's LLM author (the draft's key findings and a revision) against the real
llama-server with SmolLM2-135M, over the real corpus tools (the connector on the real bus, the
bundled SciFact excerpt) with the run recorded on JetStream.

Whatever the model writes, the report that comes out cites only papers the tools returned and
quotes only text found verbatim in them; when nothing usable remains the round is the offline
author's, and the run's `author.llm_synthesis` step says why. Tokens are in the step's result.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from nats.js import JetStreamContext

from research_contracts.reviews import RequestReview
from research_contracts.runs import ToolReturned
from research_llm import build_chain
from research_llm.offline.relevance import Relevance, default_encoder
from research_modes import ConnectorClient
from research_reports import check_report
from research_reports.text import found_verbatim
from research_reviewer.author import OfflineAuthor
from research_reviewer.experiment import review_loop
from research_reviewer.llm_author import LlmAuthor
from research_reviewer.peer_review import PeerReviewer
from research_reviewer.prepare import review_job
from research_reviewer.reshape import conform
from research_reviewer.settings import ReviewerSettings
from research_reviewer.tools import Toolbox
from research_runs import RunRecorder, replay
from tests.llm_real.conftest import llm_settings
from tests.reviewer.conftest import TOPIC, connector_service, demo_corpus, js  # noqa: F401 - fixtures

pytestmark = [pytest.mark.llm, pytest.mark.timeout(1800)]


async def _step(js: JetStreamContext, run_id: str) -> list[Any]:  # noqa: F811 - `js` is the fixture imported above
    return [
        e.results
        async for _, e in replay(js, run_id)
        if isinstance(e, ToolReturned) and e.tool_id == "author.llm_synthesis"
    ]


def assert_grounded(report, author: LlmAuthor) -> None:
    known = author.known_papers()
    assert check_report(report).unknown == 0
    assert conform(report, known).counts() == {
        "dropped_references": 0,
        "dropped_quotes": 0,
        "dropped_findings": 0,
    }
    findings = report.section("Key Findings").findings
    assert findings, (
        "a report always has key findings (the model's usable ones, or the offline author's)"
    )
    for finding in findings:
        for quote in finding.quotes:
            reference = report.reference(quote.reference_id)
            assert reference is not None and reference.paper_id in known
            assert found_verbatim(quote.text, reference.source_text), quote.text


async def test_the_author_and_a_revision_with_the_real_model(
    llama,
    nc,
    js,  # noqa: F811 - the fixture imported above
    connector_service,  # noqa: F811 - the fixture imported above
) -> None:
    chain = build_chain(llm_settings(llama), encoder=None)
    settings = ReviewerSettings(llm_timeout_s=600.0)  # a slow model on one loaded core
    author = LlmAuthor(chain, OfflineAuthor(Relevance(default_encoder()), settings), settings)
    port = ConnectorClient(lambda: nc, timeout_s=30.0)
    job = review_job(
        RequestReview(topic=TOPIC, max_iterations=1, run_id=f"llm-real-{uuid.uuid4().hex[:8]}")
    )
    recorder = RunRecorder(js, job.run_id)
    async with recorder.running():
        outcome = await review_loop(job, author, PeerReviewer(spot_checks=3), port, recorder)
    report = outcome.report
    assert_grounded(report, author)
    [step] = await _step(js, job.run_id)
    if report.metadata["engine"] == "llm":
        assert step["provider"] == "openai" and "fallback" not in step
        assert report.metadata["model"].startswith("openai:")
    else:
        assert step.get("fallback", "").startswith("offline"), step
    assert step["usage"]["calls"] >= 1, step  # every request of the step, a timed-out one too
    if not any("timeout" in f or "no answer within" in f for f in step.get("failures", [])):
        assert step["usage"]["tokens_in"] > 0, step  # the tokens the server reported
    assert report.metadata["llm_usage"]["calls"] == step["usage"]["calls"], (
        "the report sums its rounds' requests"
    )

    run_id = f"llm-real-revise-{uuid.uuid4().hex[:6]}"
    revised = await author.revise(report, outcome.review, Toolbox(port, RunRecorder(js, run_id)))
    assert_grounded(revised, author)
    [step] = await _step(js, run_id)
    assert ("fallback" in step) == (revised.metadata["engine"] == "offline"), step
