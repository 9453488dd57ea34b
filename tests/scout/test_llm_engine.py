"""The scout's LLM engine through a real `ProviderChain` (`research_llm.build_chain`) talking HTTP
to the local fake OpenAI/Gemini server: the judge's labels with confidence and relevance clamped,
a refined query written by the model from the non-strong rationales (identifiers never sent to
the search APIs), facts held to their source (a quote not in the source is rejected, a statement
the quote does not support is dropped by the citation checker), placeholders mapped back, and
every model failure (5xx, an answer still invalid after the corrective retry) answered by the
offline engine — in the loop alone and in a stored run on real NATS + Postgres."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from research_contracts import EvidenceFound, SearchEvidence
from research_contracts.runs import RunDone, VerdictReached
from research_contracts.sourcelists import DetailLevel, RequestSourceList
from research_ledger.source_limits import WorkspaceLimits
from research_ledger.source_lists import SourceListBook
from research_llm import build_chain
from research_platform.settings import LLMSettings
from research_runs import replay
from research_scout import experiment, llm, prepare
from research_scout.pipeline import build
from research_scout.settings import ScoutSettings
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer, prompt_of, schema_name_of
from tests.scout.conftest import fake_connector
from tests.scout.hits import VITAMIN_D

PROMPT = (
    "Does vitamin D supplementation reduce fracture risk in older adults? Asked by Dr. Alan Grant."
)
MODEL_QUERY = "vitamin D 800 IU hip fracture meta-analysis"
SENTENCE_1 = (
    VITAMIN_D[0].abstract.split(". ")[0] + "."
)  # "… with 31,022 older adults." — a number, sent as written
SENTENCE_2 = "Vitamin D supplementation of 800 IU daily reduced hip fracture risk by 30% (HR 0.70)."


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


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


def hit_title(user: str) -> str:
    title = re.search(r"Title: (.*)", user)
    assert title is not None, user
    return title.group(1).strip()


class ScriptedModel:
    """A model that reads its prompt: labels by title, a refined query, facts for the meta-analysis."""

    def __init__(
        self,
        labels: dict[str, str],
        queries: list[str] | None = None,
        facts: list[dict] | None = None,
    ) -> None:
        self.labels = labels
        self.queries = list(queries or [])
        self.facts = facts or []

    def __call__(self, api: str, body: dict[str, Any]) -> Behaviour:
        _, user = prompt_of(api, body)
        name = schema_name_of(api, body)
        if name == "scout_judgement":
            label = self.labels.get(hit_title(user), "irrelevant")
            answer = {
                "label": label,
                "confidence": 1.8 if label == "strong" else -0.4,
                "relevance": 3 if label == "strong" else 0.2,
                "rationale": f"{label} for the focus;\n asked by Dr. [NAME_1]",
            }
        elif name == "scout_refined_query":
            answer = {"query": self.queries.pop(0) if self.queries else "", "rationale": "narrower"}
        elif name == "scout_facts":
            answer = {
                "summary": "A meta-analysis of 31,022 older adults: 800 IU a day cut hip fractures.",
                "facts": self.facts,
            }
        else:
            return Behaviour(status=400)
        return Behaviour(text=json.dumps(answer))


def pages_search(pages: list[list]) -> tuple[list[str], Any]:
    asked: list[str] = []

    async def search(ask: SearchEvidence) -> EvidenceFound:
        asked.append(ask.query)
        return EvidenceFound(hits=pages[min(len(asked) - 1, len(pages) - 1)])

    return asked, search


def brief_for(**values: Any) -> prepare.Brief:
    return prepare.brief(RequestSourceList(prompt=PROMPT, **values), WorkspaceLimits())


def sent(server: FakeLLMServer, schema: str) -> list[str]:
    return [
        prompt_of(r.api, r.body)[1]
        for r in server.sent("openai")
        if schema_name_of(r.api, r.body) == schema
    ]


@pytest.mark.unit
async def test_the_model_judges_with_clamped_confidence_and_a_restored_one_line_rationale(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.responder = ScriptedModel(
        {VITAMIN_D[0].title: "strong", VITAMIN_D[2].title: "partial"}
    )
    chain, keywords = chain_for(llm_server), brief_for().keywords

    strong = await llm.judge(chain, prepare.candidate(VITAMIN_D[0]), PROMPT, keywords, 5.0)
    partial = await llm.judge(chain, prepare.candidate(VITAMIN_D[2]), PROMPT, keywords, 5.0)
    assert strong is not None and partial is not None

    assert (strong.label, strong.confidence, strong.relevance, strong.model) == (
        "strong",
        1.0,
        1.0,
        "gpt-test",
    )
    assert (partial.label, partial.confidence, partial.relevance) == ("partial", 0.0, 0.2)
    assert (
        strong.rationale == "strong for the focus; asked by Dr. Alan Grant"
    )  # one line, placeholder mapped back
    [first, _] = sent(llm_server, "scout_judgement")
    assert (
        "Alan Grant" not in first and "<<<CLINICAL_DATA>>>" in first and VITAMIN_D[0].title in first
    )


@pytest.mark.unit
async def test_the_loop_runs_the_models_refined_query_and_stops_on_a_strong_hit(
    llm_server: FakeLLMServer,
) -> None:
    # page 1: only partial hits; the model refines; page 2 brings the meta-analysis, which it calls strong
    llm_server.responder = ScriptedModel(
        {
            VITAMIN_D[1].title: "partial",
            VITAMIN_D[3].title: "partial",
            VITAMIN_D[0].title: "strong",
        },
        queries=[f"[NAME_1] {MODEL_QUERY}"],
    )
    asked, search = pages_search([[VITAMIN_D[1], VITAMIN_D[3]], [VITAMIN_D[0]]])

    snapshot, loop, stop = await build(
        brief_for(num_references=1),
        ScoutSettings(engine="llm", max_iterations=3),
        search,
        run_id="sl-llm",
        chain=chain_for(llm_server),
    )

    assert stop == "enough_strong"
    # the model's query, the placeholder dropped and built by the outbound allow-list (the dose's digits
    # could as well be a record number): no identifier goes to a search API
    assert asked[1] == "vitamin D IU hip fracture meta-analysis"
    assert (
        loop.iterations[0]["next_query"] == MODEL_QUERY and loop.iterations[1]["next_query"] is None
    )
    assert [j["label"] for it in loop.trace for j in it["judgements"]] == [
        "partial",
        "partial",
        "strong",
    ]
    assert all(0 <= j["confidence"] <= 1 for it in loop.trace for j in it["judgements"])
    [refine_prompt] = sent(
        llm_server, "scout_refined_query"
    )  # one refinement: the loop stopped on the strong hit
    assert refine_prompt.count("[partial]") == 2 and VITAMIN_D[1].title in refine_prompt
    assert snapshot.source_list.sources[0].title == VITAMIN_D[0].title
    assert snapshot.provenance[str(snapshot.source_list.sources[0].source_id)][
        "rationale"
    ].startswith("strong for the focus")


@pytest.mark.unit
@pytest.mark.parametrize("reason", ["empty_query", "repeated_query"])
async def test_an_empty_or_repeated_model_query_stops_the_loop(
    llm_server: FakeLLMServer, reason: str
) -> None:
    brief = brief_for(num_references=3)
    again = " ".join(reversed(brief.query.upper().split()))  # the same query, reordered and shouted
    llm_server.responder = ScriptedModel(
        {VITAMIN_D[1].title: "partial"}, queries=["  " if reason == "empty_query" else again]
    )
    asked, search = pages_search([[VITAMIN_D[1]]])

    _, loop, stop = await build(
        brief,
        ScoutSettings(engine="llm", max_iterations=3),
        search,
        run_id="sl-stop",
        chain=chain_for(llm_server),
    )

    assert stop == reason and asked == [brief.query] and len(loop.iterations) == 1


@pytest.mark.unit
async def test_facts_not_in_the_source_are_rejected(llm_server: FakeLLMServer) -> None:
    facts = [
        # the model saw the source's 31,022 as written: a number with a separator is no identifier (issue 36)
        {
            "statement": "A meta-analysis pooled 11 randomized controlled trials with 31,022 older adults.",
            "quote": SENTENCE_1,
            "confidence": "high",
        },
        {
            "statement": "Daily 800 IU of vitamin D reduced hip fracture risk by 30%.",
            "quote": SENTENCE_2,
            "confidence": "high",
        },
        # a quote the source does not contain: rejected before the checker
        {
            "statement": "Vitamin D halved mortality.",
            "quote": "Vitamin D halved all-cause mortality.",
            "confidence": "high",
        },
        # a real quote under a statement with a number the source never states: the citation checker drops it
        {
            "statement": "Vitamin D reduced hip fracture risk by 45%.",
            "quote": SENTENCE_2,
            "confidence": "medium",
        },
        {
            "statement": "  ",
            "quote": SENTENCE_2,
            "confidence": "inferred",
        },  # nothing to state: left out
    ]
    llm_server.responder = ScriptedModel({VITAMIN_D[0].title: "strong"}, facts=facts)
    _, search = pages_search([[VITAMIN_D[0]]])

    snapshot, _, _ = await build(
        brief_for(num_references=1, detail_level=DetailLevel.facts_list.value),
        ScoutSettings(engine="llm"),
        search,
        run_id="sl-facts",
        chain=chain_for(llm_server),
    )

    [source] = snapshot.source_list.sources
    provenance = snapshot.provenance[str(source.source_id)]
    assert source.facts is not None
    assert [f.statement for f in source.facts] == [
        "A meta-analysis pooled 11 randomized controlled trials with 31,022 older adults.",
        "Daily 800 IU of vitamin D reduced hip fracture risk by 30%.",
    ]
    assert [f["locator"] for f in provenance["facts"]] == [
        "abstract sentence 1",
        "abstract sentence 2",
    ]
    assert all(f["quote"] in VITAMIN_D[0].abstract for f in provenance["facts"])
    assert (
        snapshot.dropped_facts == 1
    )  # the 45 % statement; the invented quote never reached the checker
    assert (
        source.summary.startswith("A meta-analysis of 31,022 older adults")
        and provenance["model"] == "gpt-test"
    )
    assert "31,022" in sent(llm_server, "scout_facts")[0]  # science reaches the model as written


@pytest.mark.unit
@pytest.mark.parametrize("failure", ["server_errors", "invalid_twice"])
async def test_a_failing_model_leaves_the_run_to_the_offline_engine(
    llm_server: FakeLLMServer, failure: str
) -> None:
    if (
        failure == "invalid_twice"
    ):  # every question answered with JSON that breaks its schema, twice
        llm_server.responder = lambda api, body: Behaviour(
            text=json.dumps({"label": "maybe", "query": 7, "facts": "none"})
        )
    # else: no script at all, every call is a 500 (OpenAI, then Gemini)
    _asked, search = pages_search([VITAMIN_D])
    brief = brief_for(num_references=3, detail_level=DetailLevel.facts_list.value)
    offline, offline_loop, offline_stop = await build(
        brief, ScoutSettings(max_iterations=3), search, run_id="sl-offline"
    )

    snapshot, loop, stop = await build(
        brief,
        ScoutSettings(engine="llm", max_iterations=3),
        search,
        run_id="sl-fail",
        chain=chain_for(llm_server, "auto"),
    )

    assert stop == offline_stop and loop.iterations == offline_loop.iterations
    assert [s.model_dump(exclude={"source_id"}) for s in snapshot.source_list.sources] == [
        s.model_dump(exclude={"source_id"}) for s in offline.source_list.sources
    ]
    assert {p["model"] for p in snapshot.provenance.values()} == {experiment.MODEL}
    assert llm_server.sent("openai") and llm_server.sent(
        "gemini"
    )  # the chain was asked, and every link failed
    if failure == "invalid_twice":
        assert any("did not validate" in json.dumps(r.body) for r in llm_server.sent("openai"))


@pytest.mark.integration
async def test_a_stored_run_with_the_model_down_completes_on_the_offline_engine(
    nc, sessions, scout_factory, unique, llm_server: FakeLLMServer
) -> None:
    subject = f"test.connector.{unique}"
    async with fake_connector(nc, subject) as connector:
        connector.hits = list(VITAMIN_D)
        scout = scout_factory(subject, ScoutSettings(engine="llm", max_iterations=2))
        scout.chain = chain_for(llm_server, "auto")  # every call a 500
        command = RequestSourceList(
            prompt=PROMPT, num_references=2, detail_level="facts_list", source_type="academic"
        )
        outcome = await scout.handle(command)

    assert outcome.error is None and outcome.version == 1 and outcome.snapshot.source_list.sources
    async with sessions() as session:
        book = SourceListBook(session, service="test")
        (run,) = await book.runs(command.source_list_id)
        judgements = await book.judgements(command.run_id)
    assert run.status == "completed" and judgements
    events = [event async for _, event in replay(nc.jetstream(), command.run_id)]
    verdicts = [e for e in events if isinstance(e, VerdictReached)]
    assert verdicts and {v.details["model"] for v in verdicts} == {experiment.MODEL}
    assert isinstance(events[-1], RunDone) and events[-1].status == "completed"
    assert len(llm_server.sent("openai")) >= len(verdicts)  # each judgement asked the model first


@pytest.mark.integration
async def test_a_stored_run_records_the_models_judgements(
    nc, sessions, scout_factory, unique, llm_server: FakeLLMServer
) -> None:
    llm_server.responder = ScriptedModel({h.title: "strong" for h in VITAMIN_D[:2]})
    subject = f"test.connector.{unique}"
    async with fake_connector(nc, subject) as connector:
        connector.hits = list(VITAMIN_D)
        scout = scout_factory(subject, ScoutSettings(engine="llm", max_iterations=2))
        scout.chain = chain_for(llm_server)
        command = RequestSourceList(
            prompt=PROMPT, num_references=2, detail_level="citation_summary", source_type="academic"
        )
        outcome = await scout.handle(command)

    assert outcome.error is None and outcome.stop_reason == "enough_strong"
    async with sessions() as session:
        judgements = await SourceListBook(session, service="test").judgements(command.run_id)
    assert (
        sorted((j.label, j.confidence) for j in judgements)
        == [("irrelevant", 0.0)] * 2 + [("strong", 1.0)] * 2
    )
    # the prompt was de-identified where it entered (the privacy boundary): the stored rationale keeps the placeholder
    assert all(
        "\n" not in j.rationale and "[NAME_1]" in j.rationale and "Grant" not in j.rationale
        for j in judgements
    )
    verdicts = [
        e
        for e in [event async for _, event in replay(nc.jetstream(), command.run_id)]
        if isinstance(e, VerdictReached)
    ]
    assert {v.details["model"] for v in verdicts} == {"gpt-test"}
