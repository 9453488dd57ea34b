"""The OpenAI provider's limits against the local fake server: the prompt trimmed to the context
(evidence cut, instructions whole), `max_tokens` on every request, one tighter retry when a
server still refuses the prompt as too long, the per-provider concurrency limit, the run's budget
(tokens, seconds or money, in each engine's run: a research task, a verification, a source list, a correlator
pass) and the token / cost accounting (price table; a local model costs 0)."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest
from pydantic import SecretStr

from research_llm import EvidenceDoc, build_chain, context, usage
from research_llm.errors import DoesNotFit
from research_llm.providers.openai import OpenAIProvider
from research_llm.usage import llm_run
from research_platform.settings import LLMSettings
from research_privacy import DATA_MARKER
from tests.llm.fake_llm_server import Behaviour, FakeLLMServer

pytestmark = pytest.mark.unit

LONG = [
    EvidenceDoc(
        source_id=f"corpus:{n}",
        title=f"Paper {n}",
        text=f"Vitamin D supplementation reduced fractures in trial {n}. "
        + "Filler sentence about methods. " * 200,
    )
    for n in range(6)
]
DRAFT = {
    "statement": "Vitamin D reduces fractures.",
    "entity": "vitamin D",
    "confidence": 0.7,
    "supports": [
        {
            "source_id": "corpus:0",
            "quote": "Vitamin D supplementation reduced fractures in trial 0.",
            "locator": None,
        }
    ],
}


def settings(server: FakeLLMServer, **overrides: object) -> LLMSettings:
    values: dict = {
        "provider": "openai",
        "openai_api_key": SecretStr(""),
        "openai_base_url": server.openai_url,
        "openai_model": "local-model",
        "timeout_s": 5.0,
    }
    values.update(overrides)
    return LLMSettings(**values)


def test_fit_cuts_the_longest_data_blocks_first_and_keeps_the_rest_whole() -> None:
    short, long_ = "a short block", "x" * 5000
    user = f"Question:\n{DATA_MARKER}\n{short}\n{DATA_MARKER}\nsource_id: 1\n{DATA_MARKER}\n{long_}\n{DATA_MARKER}"
    messages = [
        {"role": "system", "content": "Answer with JSON."},
        {"role": "user", "content": user},
    ]
    fitted, cut = context.fit(messages, budget_tokens=400, chars_per_token=3.0)
    assert context.estimate_tokens(fitted, 3.0) <= 400 and cut > 0
    assert (
        fitted[0] == messages[0]
        and short in fitted[1]["content"]
        and "source_id: 1" in fitted[1]["content"]
    )
    assert fitted[1]["content"].count(DATA_MARKER) == 4
    assert context.fit(messages, budget_tokens=10_000, chars_per_token=3.0) == (messages, 0)
    with pytest.raises(DoesNotFit):
        context.fit(
            [{"role": "system", "content": "y" * 3000}, {"role": "user", "content": user}], 100, 3.0
        )


async def test_a_long_prompt_is_trimmed_to_the_configured_context_with_max_tokens(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.queue("openai", Behaviour(text=json.dumps(DRAFT)))
    chain = build_chain(
        settings(llm_server, context_tokens=2048, max_output_tokens=1024), encoder=None
    )
    outcome = await chain.draft_claim("Does vitamin D reduce fractures?", None, LONG)
    assert outcome.provider == "openai" and outcome.draft.supports
    [request] = llm_server.sent("openai")
    assert request.body["max_tokens"] == 2048 // 3, "the answer gets at most a third of the context"
    sent = request.body["messages"]
    assert context.estimate_tokens(sent, 3.0) <= 2048 - 2048 // 3
    assert all(f"corpus:{n}" in sent[1]["content"] for n in range(6)), (
        "every document keeps its id and opening"
    )
    assert "reduced fractures in trial 5" in sent[1]["content"]


async def test_a_context_refusal_is_retried_once_tighter_with_the_servers_n_ctx(
    llm_server: FakeLLMServer,
) -> None:
    refusal = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 9000,
        "n_ctx": 1024,
    }
    chain = build_chain(settings(llm_server), encoder=None)
    provider = chain.providers[0]
    assert isinstance(provider, OpenAIProvider)
    llm_server.queue("openai", Behaviour(text=json.dumps(DRAFT)))

    class Refusing(httpx.AsyncBaseTransport):
        """llama.cpp's answer to a prompt over its context, once; then the fake server."""

        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()
            self.bodies: list[dict] = []

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                self.bodies.append(json.loads(request.content))
                if len(self.bodies) == 1:
                    return httpx.Response(400, json={"error": refusal})
            return await self.inner.handle_async_request(request)

    transport = Refusing()
    provider._transport = transport  # a refusal first: the provider's own seam for a transport
    outcome = await chain.draft_claim("Does vitamin D reduce fractures?", None, LONG)
    assert outcome.provider == "openai", outcome.failures
    first, second = transport.bodies
    assert len(json.dumps(second["messages"])) < len(json.dumps(first["messages"]))
    assert second["max_tokens"] == 1024 // 3 and await provider.context_tokens() == 1024
    assert context.estimate_tokens(second["messages"], 0.9 * 4) <= 1024 - 1024 // 3


async def test_one_request_at_a_time_with_concurrency_1(llm_server: FakeLLMServer) -> None:
    in_flight = peak = 0
    lock = threading.Lock()

    def responder(api: str, body: dict) -> Behaviour:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        threading.Event().wait(0.2)
        with lock:
            in_flight -= 1
        return Behaviour(text=json.dumps(DRAFT))

    llm_server.responder = responder
    chain = build_chain(settings(llm_server, concurrency=1), encoder=None)
    outcomes = await asyncio.gather(
        *[chain.draft_claim("Vitamin D?", None, LONG[:1]) for _ in range(4)]
    )
    assert [o.provider for o in outcomes] == ["openai"] * 4
    assert peak == 1


async def test_usage_is_summed_per_call_and_run_with_the_price_table(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(DRAFT))
    priced = build_chain(settings(llm_server, openai_model="gpt-4o"), encoder=None)
    local = build_chain(settings(llm_server), encoder=None)
    async with llm_run() as run:
        one = await priced.draft_claim("Vitamin D?", None, LONG[:1])
        two = await local.draft_claim("Vitamin D?", None, LONG[:1])
    assert one.usage["tokens_in"] == 1 and one.usage["tokens_out"] == 1  # the fake server's `usage`
    assert one.usage["cost_usd"] == pytest.approx((2.50 + 10.00) / 1_000_000)
    assert two.usage["cost_usd"] == 0.0, (
        "a model missing from the price table (a local one) costs 0"
    )
    assert run.usage.calls == 2 and run.usage.tokens == 4
    assert run.usage.models == {"openai:gpt-4o": 1, "openai:local-model": 1}


async def test_a_spent_run_budget_leaves_the_rest_of_the_run_to_offline(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(DRAFT))
    chain = build_chain(settings(llm_server), encoder=None)
    async with llm_run(budget_tokens=2):
        first = await chain.draft_claim("Vitamin D?", None, LONG[:1])
        second = await chain.draft_claim("Vitamin D?", None, LONG[:1])
    assert first.provider == "openai"
    assert (
        second.provider == "offline"
        and "run budget spent (2 of 2 tokens)" in second.failures[0].reason
    )
    assert len(llm_server.sent("openai")) == 1


async def test_a_draft_with_no_grounded_citation_is_a_failure_and_offline_answers(
    llm_server: FakeLLMServer,
) -> None:
    invented = {
        **DRAFT,
        "supports": [
            {"source_id": "corpus:404", "quote": "A trial nobody ran.", "locator": None},
            {"source_id": "corpus:0", "quote": "Vitamin D cured every fracture.", "locator": None},
        ],
    }
    llm_server.queue("openai", Behaviour(text=json.dumps(invented)))
    outcome = await build_chain(settings(llm_server), encoder=None).draft_claim(
        "Vitamin D?", None, LONG[:2]
    )
    assert outcome.provider == "offline"
    assert outcome.failures[0].reason == (
        "no usable citation: 2 support(s), 1 naming a source never offered, 1 quoting text not in its source"
    )


# --- the per-run budget in every engine (a task, a verification, a source list, a correlator pass) ---------------------


def priced(server: FakeLLMServer, **overrides: object) -> LLMSettings:
    """The fake server under a priced model name (gpt-4o: $2.50 / $10 per million tokens in / out)."""
    return settings(server, openai_model="gpt-4o", **overrides)


async def test_a_cost_budget_stops_the_model_once_spent(llm_server: FakeLLMServer) -> None:
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(DRAFT))
    one_call = (2.50 + 10.00) / 1_000_000  # the fake server reports 1 token in, 1 out
    chain = build_chain(priced(llm_server, run_budget_usd=one_call), encoder=None)
    with usage.within(chain.new_run()) as run:
        first = await chain.draft_claim("Vitamin D?", None, LONG[:1])
        second = await chain.draft_claim("Vitamin D?", None, LONG[:1])
    assert first.provider == "openai" and second.provider == "offline"
    assert second.failures[0].reason == "run budget spent ($1.25e-05 of $1.25e-05 estimated)"
    assert len(llm_server.sent("openai")) == 1, "no request once the run's money is spent"
    assert run.fallbacks == [
        {"question": "claim_draft", "reasons": [f"openai: {second.failures[0].reason}"]}
    ]


async def test_a_run_opened_without_a_budget_takes_the_chains_and_runs_nest(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(DRAFT))
    chain = build_chain(settings(llm_server, run_budget_tokens=2), encoder=None)
    async with (
        llm_run() as outer
    ):  # what research_modes.mode_run opens around a verification / a source list
        with usage.within(usage.Run()) as inner:
            await chain.draft_claim("Vitamin D?", None, LONG[:1])
        spent = await chain.draft_claim("Vitamin D?", None, LONG[:1])
    assert outer.budget_tokens == 2 and inner.budget_tokens == 2
    assert outer.usage.calls == 1 and inner.usage.calls == 1, "a request counts in every open run"
    assert (
        spent.provider == "offline"
        and "run budget spent (2 of 2 tokens)" in spent.failures[0].reason
    )
    assert [f["question"] for f in outer.fallbacks] == ["claim_draft"] and not inner.fallbacks


async def test_the_researchers_task_budget_keeps_the_corrective_retry_from_being_sent(
    llm_server: FakeLLMServer,
) -> None:
    from research_researcher.experiment import draft_claim

    llm_server.queue("openai", Behaviour(text="not json"), Behaviour(text=json.dumps(DRAFT)))
    chain = build_chain(settings(llm_server, run_budget_tokens=2), encoder=None)
    outcome = await draft_claim("Vitamin D?", None, LONG[:1], chain)
    assert outcome.provider == "offline"
    assert outcome.failures[0].reason == "run budget spent (2 of 2 tokens)"
    assert len(llm_server.sent("openai")) == 1, (
        "the retry would have passed the task's budget: not sent"
    )
    assert outcome.usage["calls"] == 1 and outcome.usage["tokens_in"] == 1
    unbounded = build_chain(settings(llm_server), encoder=None)
    llm_server.queue("openai", Behaviour(text="not json"), Behaviour(text=json.dumps(DRAFT)))
    assert (await draft_claim("Vitamin D?", None, LONG[:1], unbounded)).provider == "openai", (
        "each task gets its own budget"
    )


async def test_the_verifiers_engine_labels_offline_once_the_runs_budget_is_spent(
    llm_server: FakeLLMServer,
) -> None:
    from research_contracts.verifications import RequestVerification
    from research_verifier.llm import LlmEngine
    from research_verifier.prepare import verification_job
    from research_verifier.tools import Passage

    passages = [
        Passage(
            paper_id="corpus:1",
            title="Vitamin D and fractures",
            text="Vitamin D supplementation reduced hip fractures in older adults.",
        )
    ]
    labels = {
        "labels": [
            {
                "paper_id": "corpus:1",
                "label": "SUPPORTS",
                "strength": 0.9,
                "sentence": "Vitamin D supplementation reduced hip fractures in older adults.",
            }
        ]
    }
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(labels))
    job = verification_job(
        RequestVerification(claim="Vitamin D reduces hip fractures in older adults.")
    )
    engine = LlmEngine(
        build_chain(settings(llm_server, run_budget_tokens=2), encoder=None), timeout_s=5
    )
    async with llm_run() as run:
        first = await engine.label(job.statements[0], 0, passages)
        second = await engine.label(job.statements[0], 0, passages)
    assert first[0].label.value == "SUPPORTS" and len(llm_server.sent("openai")) == 1
    assert second, "the offline classifier labelled the second statement's passages"
    assert run.fallbacks[0]["question"] == "verification_labels"
    assert run.fallbacks[0]["reasons"] == ["openai: run budget spent (2 of 2 tokens)"]
    async with llm_run():  # the next verification starts with its budget whole
        await engine.label(job.statements[0], 0, passages)
    assert len(llm_server.sent("openai")) == 2


async def test_the_scouts_engine_judges_offline_once_the_runs_budget_is_spent(
    llm_server: FakeLLMServer,
) -> None:
    from datetime import date

    from research_contracts import SourceHit
    from research_scout import llm as scout_llm
    from research_scout import prepare as scout_prepare

    verdict = {"label": "strong", "confidence": 0.9, "relevance": 0.9, "rationale": "On the focus."}
    llm_server.responder = lambda api, body: Behaviour(text=json.dumps(verdict))
    hit = SourceHit(
        source="pubmed",
        source_id="pmid:1",
        title="Vitamin D and fractures",
        year=2019,
        date=date(2019, 1, 1),
        abstract="Vitamin D supplementation reduced hip fractures. Adherence mattered.",
    )
    item = scout_prepare.candidate(hit)
    chain = build_chain(priced(llm_server, run_budget_usd=(2.50 + 10.00) / 1_000_000), encoder=None)
    async with llm_run() as run:
        first = await scout_llm.judge(
            chain, item, "vitamin D fractures", ["vitamin", "fractures"], timeout_s=5
        )
        second = await scout_llm.judge(
            chain, item, "vitamin D fractures", ["vitamin", "fractures"], timeout_s=5
        )
    assert first is not None and second is not None
    assert first.model == "gpt-4o" and first.rationale == "On the focus."
    assert second.model != "gpt-4o", "the offline engine judged the second hit"
    assert len(llm_server.sent("openai")) == 1
    assert run.fallbacks == [
        {
            "question": "scout_judgement",
            "reasons": ["openai: run budget spent ($1.25e-05 of $1.25e-05 estimated)"],
        }
    ]


async def test_the_correlators_pass_is_one_run_whose_spent_budget_leaves_the_clusters_to_the_detectors(
    llm_server: FakeLLMServer,
) -> None:
    import uuid

    from research_correlator import experiment
    from research_correlator.prepare import Cluster, ClusterClaim

    llm_server.responder = lambda api, body: Behaviour(
        text=json.dumps({"kind": "dose_response", "reasoning": "Doses rise."})
    )
    claims = tuple(
        ClusterClaim(uuid.uuid4(), f"{mg} mg daily reduced mortality by {pct}%.", 0.7, (), ())
        for mg, pct in ((10, 5), (20, 11), (40, 23))
    )
    cluster = Cluster("statins", claims, frozenset())
    candidates = experiment.detect(cluster, min_score=0.5)
    chain = build_chain(settings(llm_server, run_budget_tokens=2), encoder=None)
    with usage.within(chain.new_run()) as run:
        confirmed = await experiment.decide(cluster, candidates, chain, 5)
        decided = await experiment.decide(cluster, candidates, chain, 5)
    assert confirmed.model == "openai:local-model" and confirmed.reasoning == "Doses rise."
    assert decided.model == "offline-correlator"
    assert "no model confirmed (openai: run budget spent (2 of 2 tokens))" in decided.reasoning
    assert run.usage.calls == 1 and len(llm_server.sent("openai")) == 1
