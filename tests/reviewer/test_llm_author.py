"""The reviewer's LLM author through a real `ProviderChain` (`research_llm.build_chain`) talking
HTTP to the local fake OpenAI/Gemini server, over the real corpus tools (the connector on the real
bus) with the run recorded on JetStream.

A scripted model reads its prompt and answers with findings quoting the evidence papers it was
shown — and with a fabricated reference, a quote no paper contains, an empty statement, an
empty paper id and a repeated finding. Only findings resting on real references and verbatim
quotes reach the report (the rest discarded and counted by the author, so `reshape.conform`,
the loop's safety net, has nothing left to drop). When the model fails — 5xx from every provider, an answer still invalid
after the corrective retry, no answer within the step's timeout, or nothing usable in it — the
round's report is the offline author's, labelled offline, and the trace says why."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from faststream import FastStream
from nats.js import JetStreamContext
from pydantic import SecretStr

from research_contracts.reviews import RequestReview
from research_contracts.runs import ToolReturned
from research_llm import build_chain
from research_llm.offline.relevance import Relevance, default_encoder
from research_modes import ConnectorClient
from research_platform.settings import LLMSettings
from research_reports import check_report
from research_reports.text import found_verbatim
from research_reviewer.author import MODEL as OFFLINE_MODEL
from research_reviewer.author import OfflineAuthor
from research_reviewer.experiment import LoopOutcome, review_loop
from research_reviewer.llm_author import LlmAuthor
from research_reviewer.peer_review import PeerReviewer
from research_reviewer.prepare import review_job
from research_reviewer.reshape import conform
from research_reviewer.settings import ReviewerSettings
from research_reviewer.tools import Toolbox
from research_runs import RunRecorder, replay
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer, prompt_of
from tests.reviewer.conftest import TOPIC

pytestmark = pytest.mark.integration
RELEVANCE = Relevance(default_encoder())
FABRICATED_ID = "corpus:999999999"
INVENTED = "Exercise training cured heart failure in every single patient within one week."
PAPER = re.compile(
    r'paper_id: "([^"]+)"\n<<<CLINICAL_DATA>>>\nTitle: [^\n]*\n((?:(?!<<<CLINICAL_DATA>>>).)*)\n<<<CLINICAL_DATA>>>',
    re.DOTALL,
)


def chain_for(server: FakeLLMServer, provider: str = "openai"):
    settings = LLMSettings(
        provider=provider,
        openai_api_key=SecretStr("sk-test"),
        openai_base_url=server.openai_url,
        openai_model="gpt-test",
        gemini_api_key=SecretStr("gm-test"),
        gemini_base_url=server.gemini_url,
        gemini_model="gemini-test",
        timeout_s=5.0,
    )
    return build_chain(settings, encoder=None)


def first_sentence(text: str) -> str:
    """The first sentence of a paper as the model saw it (placeholders and all), ≥ 6 words."""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if len(sentence.split()) >= 6 and sentence.endswith("."):
            return sentence
    raise AssertionError("no usable sentence in the evidence")


def synthesis(api: str, body: dict[str, Any]) -> Behaviour:
    """The scripted model: three honest findings, then one of each kind of fabrication."""
    _, user = prompt_of(api, body)
    papers = [
        (paper_id, first_sentence(text))
        for paper_id, text in PAPER.findall(user)
        if len(text.split()) > 20
    ][:3]
    (a, sa), (b, sb), (c, sc) = papers
    asked = re.search(r"\n(\w+): <<<CLINICAL_DATA>>>", user)
    assert asked is not None, user
    question = asked.group(1)
    quote = lambda paper_id, text: {"paper_id": paper_id, "text": text}
    findings = [
        {
            "statement": sa,
            "tag": "supported",
            "subquestion": question,
            "quotes": [quote(a, sa), quote(b, sb)],
        },
        {"statement": sc, "tag": "INSUFFICIENT", "subquestion": question, "quotes": [quote(c, sc)]},
        {
            "statement": "A paper nobody wrote settles the matter.",
            "tag": "SUPPORTED",
            "subquestion": question,
            "quotes": [
                quote(FABRICATED_ID, "A paper nobody wrote settles the matter."),
                quote(a, sa),
            ],
        },
        {
            "statement": INVENTED,
            "tag": "INSUFFICIENT",
            "subquestion": question,
            "quotes": [quote(a, INVENTED)],
        },
        {
            "statement": sb,
            "tag": "INSUFFICIENT",
            "subquestion": question,
            "quotes": [quote(b, sb), quote(c, INVENTED)],
        },
        {
            "statement": sa,
            "tag": "SUPPORTED",
            "subquestion": question,
            "quotes": [quote(a, sa)],
        },  # repeated
        {
            "statement": "   ",
            "tag": "SUPPORTED",
            "subquestion": question,
            "quotes": [quote(a, sa)],
        },  # nothing stated
        {
            "statement": "An unattributed quote.",
            "tag": "INSUFFICIENT",
            "subquestion": question,
            "quotes": [quote(" ", sa)],
        },
    ]
    return Behaviour(text=json.dumps({"findings": findings}))


_DRAFTED: dict[str, Any] = {}


@pytest.fixture
async def drafted(nc, js: JetStreamContext, connector_service: FastStream) -> dict[str, Any]:
    """One LLM-authored review round over the real corpus tools, written once for the module."""
    if not _DRAFTED:
        server = FakeLLMServer(responder=synthesis)
        server.start()
        try:
            port = ConnectorClient(lambda: nc, timeout_s=20.0)
            author = LlmAuthor(
                chain_for(server), OfflineAuthor(RELEVANCE, ReviewerSettings()), ReviewerSettings()
            )
            job = review_job(
                RequestReview(
                    topic=TOPIC, max_iterations=1, run_id=f"llm-review-{uuid.uuid4().hex[:8]}"
                )
            )
            recorder = RunRecorder(js, job.run_id)
            async with recorder.running():
                outcome = await review_loop(
                    job, author, PeerReviewer(spot_checks=3), port, recorder
                )
        finally:
            server.stop()
        _DRAFTED.update(
            author=author, outcome=outcome, job=job, port=port, sent=server.sent("openai")
        )
    return _DRAFTED


async def _tool_results(js: JetStreamContext, run_id: str, tool_id: str) -> list[Any]:
    return [
        e.results
        async for _, e in replay(js, run_id)
        if isinstance(e, ToolReturned) and e.tool_id == tool_id
    ]


async def test_llm_findings_cite_only_real_references_and_verbatim_quotes(drafted, js) -> None:
    outcome: LoopOutcome = drafted["outcome"]
    author: LlmAuthor = drafted["author"]
    report = outcome.report
    [request] = drafted["sent"]
    user = prompt_of("openai", request.body)[1]
    assert (
        request.body["response_format"]["json_schema"]["name"] == "review_findings"
        and "<<<CLINICAL_DATA>>>" in user
    )

    key_findings = report.section("Key Findings")
    assert key_findings is not None
    findings = key_findings.findings
    assert [f.tag for f in findings] == ["SUPPORTED", "INSUFFICIENT", "INSUFFICIENT"]
    assert [len(f.quotes) for f in findings] == [
        2,
        1,
        1,
    ]  # the third lost its invented second quote
    known = author.known_papers()
    dossier = author.offline.dossier
    assert dossier is not None
    for finding in findings:
        assert (
            finding.group == dossier.questions[0].text
        )  # the model's "Q1" is shown as the question
        for quote in finding.quotes:
            reference = report.reference(quote.reference_id)
            assert reference is not None and reference.paper_id in known
            assert found_verbatim(quote.text, reference.source_text), (
                quote.text
            )  # placeholders mapped back
    assert all(r.paper_id != FABRICATED_ID for r in report.references)
    markdown = report.render_markdown()
    assert (
        INVENTED not in markdown
        and "A paper nobody wrote" not in markdown
        and "[MRN_" not in markdown
    )

    assert outcome.rounds[0].dropped == {
        "dropped_references": 0,
        "dropped_quotes": 0,
        "dropped_findings": 0,
    }
    assert report.metadata["engine"] == "llm" and report.metadata["model"] == "openai:gpt-test"
    # the repeat, the empty statement, the empty paper id and its finding (4); the fabricated paper's
    # finding with its two quotes (3); the invented quote and its finding (2); the third's invented quote (1)
    assert report.metadata["llm_discarded"] == 10
    assert check_report(report).unknown == 0 and outcome.check.unknown == 0
    [step] = await _tool_results(js, drafted["job"].run_id, "author.llm_synthesis")
    used = step.pop("usage")
    assert step == {"provider": "openai", "model": "gpt-test", "findings": 8, "discarded": 10}
    assert (used["calls"], used["tokens_in"], used["tokens_out"]) == (
        1,
        1,
        1,
    )  # the fake server's `usage`
    assert report.metadata["llm_usage"]["calls"] >= 1


@pytest.mark.parametrize("failure", ["server_errors", "invalid_twice", "timeout", "nothing_usable"])
async def test_a_failing_model_leaves_the_round_to_the_offline_author(
    drafted, js, failure: str
) -> None:
    author: LlmAuthor = drafted["author"]
    outcome: LoopOutcome = drafted["outcome"]
    server = FakeLLMServer()
    if failure == "invalid_twice":
        server.responder = lambda api, body: Behaviour(
            text='{"findings": [{"statement": "no quotes", "tag": "SUPPORTED"}]}'
        )
    elif failure == "timeout":
        server.responder = lambda api, body: Behaviour(text='{"findings": []}', delay_s=3.0)
    elif failure == "nothing_usable":
        server.responder = lambda api, body: Behaviour(
            text=json.dumps(
                {
                    "findings": [
                        {
                            "statement": "",
                            "tag": "SUPPORTED",
                            "subquestion": "",
                            "quotes": [{"paper_id": "", "text": ""}],
                        }
                    ]
                }
            )
        )
    # server_errors: no script, every call is a 500
    server.start()
    author.chain = chain_for(server, "auto")  # OpenAI, then Gemini, on the same fake server
    author.settings = ReviewerSettings(llm_timeout_s=0.5)
    run_id = f"llm-revise-{failure}-{uuid.uuid4().hex[:6]}"
    try:
        revised = await author.revise(
            outcome.report, outcome.review, Toolbox(drafted["port"], RunRecorder(js, run_id))
        )
    finally:
        server.stop()

    assert author.model == OFFLINE_MODEL
    assert revised.metadata["engine"] == "offline" and "llm_discarded" not in revised.metadata
    assert conform(revised, author.known_papers()).counts() == {
        "dropped_references": 0,
        "dropped_quotes": 0,
        "dropped_findings": 0,
    }
    revised_findings = revised.section("Key Findings")
    assert revised_findings is not None and revised_findings.findings
    [step] = await _tool_results(js, run_id, "author.llm_synthesis")
    assert step["fallback"].startswith("offline")
    if failure == "nothing_usable":
        assert (
            step["provider"] == "openai" and step["discarded"] == 2
        )  # the empty quote and its empty finding
    else:
        assert [f.split("/")[0] for f in step["failures"]] == ["openai", "gemini"]
    if failure == "invalid_twice":
        assert "invalid after one retry" in step["failures"][0]
        assert any("did not validate" in json.dumps(r.body) for r in server.sent("openai"))
    if failure == "timeout":
        assert all("0.5s" in f for f in step["failures"])
