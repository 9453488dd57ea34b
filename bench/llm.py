"""bench:llm — every LLM engine against a real llama.cpp `llama-server` with SmolLM2-135M-Instruct
(one thread, a 2,048-token context), on SciFact-based inputs.

For each engine, N calls (`--n`, default 2): the share of answers that validate against the
schema, the share the engine could use after its citation checks, the share of answers with a
citation dropped (an id never offered, a quote not in its source), the share that fell back to
the offline engine, p50 / p95 latency and tokens in / out. The point is the engines' robustness
with a weak, fast model — not the model's knowledge: a 135M model's claims are not evidence.

Engines: researcher (draft), critic (judge), correlator (confirm), verifier (passage labels),
scout (hit label, facts), reviewer (key findings: the author's prompt and checks, without the
bus). Last line:
    bench:llm model=… schema_valid=… usable=… fallback=… p95_s=…

Usage: .venv/bin/task bench:llm [-- --n 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import SecretStr

from bench.harness.llama_server import MODEL_NAME, LlamaServer
from bench.harness.results import print_summary
from research_contracts import SourceHit, Support
from research_contracts.sourcelists import DetailLevel
from research_contracts.verifications import RequestVerification
from research_critic.reshape import conform as critic_conform
from research_llm import (
    ClaimForReview,
    EvidenceDoc,
    NoProviderAnswered,
    build_chain,
    ground_supports,
)
from research_llm.prompts import Guard, Prompt
from research_llm.usage import collect
from research_platform.settings import LLMSettings
from research_reports.text import found_verbatim

SCIFACT = ROOT.parent / "shared" / "data" / "scifact"


@dataclass
class Tally:
    calls: int = 0
    valid: int = 0  # the model's answer validated against the schema
    usable: int = 0  # ... and the engine used it after its checks
    dropped: int = 0  # answers with at least one citation dropped by the checks
    fallback: int = 0  # the offline engine (or the detectors) answered instead
    seconds: list[float] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, other: Tally) -> None:
        for name in ("calls", "valid", "usable", "dropped", "fallback", "tokens_in", "tokens_out"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds

    def checked(self, kept: int, offered: int) -> None:
        """Count a validated answer whose citations were checked: usable when one was kept (else the
        offline engine's output stands), dropped when any was not."""
        self.dropped += kept < offered
        if kept:
            self.usable += 1
        else:
            self.fallback += 1

    def share(self, n: int) -> float:
        return n / self.calls if self.calls else 0.0

    def p(self, q: float) -> float:
        if not self.seconds:
            return 0.0
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load(n: int) -> tuple[list[dict], dict[int, dict]]:
    docs = {}
    with (SCIFACT / "corpus.jsonl").open() as fh:
        for line in fh:
            doc = json.loads(line)
            docs[doc["doc_id"]] = doc
    with (SCIFACT / "claims_train.jsonl").open() as fh:
        claims = [c for c in map(json.loads, fh) if c["evidence"]]
    return claims[: max(n, 1) * 3], docs


def evidence(doc: dict) -> EvidenceDoc:
    return EvidenceDoc(
        source_id=f"corpus:{doc['doc_id']}", title=doc["title"], text=" ".join(doc["abstract"])
    )


def papers_prompt(system: str, head: Callable[[Guard], list[str]], papers: list[dict]) -> Prompt:
    """The prompt an engine sends about `papers`: `head(guard)`'s lines, then each paper's id and
    guarded title and abstract (the first 2,500 characters), as the verifier and the reviewer do."""
    guard = Guard()
    parts = head(guard)
    for d in papers:
        parts += [
            "paper_id: " + json.dumps(f"corpus:{d['doc_id']}"),
            guard(f"Title: {d['title']}\n{' '.join(d['abstract'])[:2500]}"),
        ]
    return Prompt(system=system, user="\n".join(parts), table=guard.table)


def abstracts(papers: list[dict]) -> dict[str, str]:
    """Each paper's whole abstract by its id: a quote the engine keeps must stand in it."""
    return {f"corpus:{d['doc_id']}": " ".join(d["abstract"]) for d in papers}


async def timed(tally: Tally, coro):
    started = time.perf_counter()
    with collect() as used:
        try:
            return await coro
        finally:
            tally.seconds.append(time.perf_counter() - started)
            tally.calls += 1
            tally.tokens_in += used.tokens_in
            tally.tokens_out += used.tokens_out


async def ask(tally: Tally, chain, prompt: Prompt, schema, name: str):
    """The model's validated answer to `prompt` (counted valid), or None when no provider
    answered (counted a fallback)."""
    try:
        answered = await timed(tally, chain.ask(prompt, schema, name, timeout_s=300))
    except NoProviderAnswered:
        tally.fallback += 1
        return None
    tally.valid += 1
    return answered.answer


async def bench_researcher(chain, claims, docs, n) -> Tally:
    t = Tally()
    for claim in claims[:n]:
        ev = [evidence(docs[int(d)]) for d in claim["evidence"]] + [
            evidence(docs[i]) for i in list(docs)[:2]
        ]
        out = await timed(t, chain.draft_claim(claim["claim"], None, ev))
        grounded_failure = any(f.reason.startswith("no usable citation") for f in out.failures)
        if out.provider == "openai":
            t.valid += 1
            t.usable += 1
            t.dropped += ground_supports(out.draft, ev).dropped > 0
        else:
            t.fallback += 1
            t.valid += grounded_failure
            t.dropped += grounded_failure
    return t


async def bench_critic(chain, claims, docs, n) -> Tally:
    t = Tally()
    for claim in claims[n : 2 * n]:
        doc = docs[int(next(iter(claim["evidence"])))]
        src = f"corpus:{doc['doc_id']}"
        active = ClaimForReview(
            claim_id=uuid.uuid4(),
            entity="subject",
            statement=doc["abstract"][0],
            confidence=0.5,
            supports=[Support(source_id=src, quote=doc["abstract"][0])],
        )
        candidate = ClaimForReview(
            claim_id=uuid.uuid4(),
            entity="subject",
            statement=claim["claim"],
            confidence=0.6,
            supports=[Support(source_id=src, quote=doc["abstract"][-1])],
        )
        out = await timed(t, chain.judge_claim(candidate, [active], [evidence(doc)]))
        if out.provider == "openai":
            t.valid += 1
            t.usable += 1
            verdict = critic_conform(out, {active.claim_id})
            t.dropped += len(out.verdict.supersedes) > len(verdict.supersedes)
        else:
            t.fallback += 1
    return t


async def bench_correlator(chain, claims, docs, n) -> Tally:
    from research_correlator.confirm import confirm

    t = Tally()
    for k in range(n):
        group = claims[2 * n + k : 2 * n + k + 3]
        statements = [c["claim"] for c in group] or ["Statins lower LDL cholesterol."]
        candidates = [
            {
                "kind": "shared_citation_cluster",
                "score": 0.6,
                "evidence": {"sources": ["corpus:1"]},
            },
            {"kind": "co_occurrence", "score": 0.4, "evidence": {"entities": ["insulin"]}},
        ]
        try:
            await timed(
                t, confirm(chain, "the cluster's entity", statements, candidates, timeout_s=300)
            )
            t.valid += 1
            t.usable += 1
        except NoProviderAnswered:
            t.fallback += 1  # the deterministic detectors decide
    return t


async def bench_verifier(chain, claims, docs, n) -> Tally:
    from research_verifier.llm import SYSTEM, LabelsAnswer
    from research_verifier.prepare import verification_job

    t = Tally()
    for claim in claims[:n]:
        job = verification_job(RequestVerification(claim=claim["claim"]))
        papers = [docs[int(d)] for d in claim["evidence"]] + [docs[i] for i in list(docs)[3:5]]
        prompt = papers_prompt(
            SYSTEM,
            lambda guard, job=job: ["Statement:", guard(job.statements[0].text), "Passages:"],  # type: ignore[misc]  # `job` bound as a default: mypy cannot infer such a lambda
            papers,
        )
        answer = await ask(t, chain, prompt, LabelsAnswer, "verification_labels")
        if answer is None:
            continue
        texts = abstracts(papers)
        kept = [
            x
            for x in answer.labels
            if x.label.upper() in {"SUPPORTS", "CONTRADICTS", "QUALIFIES", "UNRELATED"}
            and x.paper_id in texts
            and found_verbatim(prompt.restore(x.sentence), texts[x.paper_id])
        ]
        t.checked(
            len(kept), len(answer.labels)
        )  # nothing kept: the offline classifier's labels stand
    return t


async def bench_scout(chain, claims, docs, n) -> Tally:
    from research_scout import detail as offline_detail
    from research_scout import llm as scout_llm
    from research_scout import prepare

    t = Tally()
    for claim in claims[:n]:
        doc = docs[int(next(iter(claim["evidence"])))]
        hit = SourceHit(
            source="pubmed",
            source_id=f"pmid:{doc['doc_id']}",
            title=doc["title"],
            abstract=" ".join(doc["abstract"]),
            year=2020,
            date=date(2020, 1, 1),
        )
        item = prepare.candidate(hit)
        keywords = [w for w in claim["claim"].lower().split() if len(w) > 4][:5]
        judged = await timed(
            t, scout_llm.judge(chain, item, claim["claim"], keywords, timeout_s=300)
        )
        remote = judged.model == MODEL_NAME
        t.valid += remote
        t.usable += remote
        t.fallback += not remote
        detail = await timed(
            t,
            scout_llm.detail(
                chain,
                item,
                DetailLevel.facts_list,
                claim["claim"],
                keywords,
                academic=True,
                timeout_s=300,
            ),
        )
        remote = detail.model == MODEL_NAME
        t.valid += remote
        offline = offline_detail.detail(item, DetailLevel.facts_list, keywords, academic=True)
        used_facts = remote and [f.quote for f in detail.facts or []] != [
            f.quote for f in offline.facts or []
        ]
        t.usable += bool(remote)
        t.dropped += bool(remote and not used_facts)
        t.fallback += not remote
    return t


async def bench_reviewer(chain, claims, docs, n) -> Tally:
    from research_reviewer.llm_author import SYSTEM, SynthesisAnswer

    t = Tally()
    for claim in claims[:n]:
        papers = [docs[int(d)] for d in claim["evidence"]] + [docs[i] for i in list(docs)[5:7]]
        prompt = papers_prompt(
            SYSTEM,
            lambda guard, claim=claim: [  # type: ignore[misc]  # `claim` bound as a default: mypy cannot infer such a lambda
                "Topic:",
                guard(claim["claim"]),
                "Sub-questions:",
                f"Q1: {guard(claim['claim'])}",
                "Evidence papers:",
            ],
            papers,
        )
        answer = await ask(t, chain, prompt, SynthesisAnswer, "review_findings")
        if answer is None:
            continue
        texts = abstracts(papers)
        quotes = [(q.paper_id, prompt.restore(q.text)) for f in answer.findings for q in f.quotes]
        good = [
            q
            for q in quotes
            if q[0] in texts and q[1].strip() and found_verbatim(q[1], texts[q[0]])
        ]
        t.checked(len(good), len(quotes))  # no usable finding: the offline author's findings stand
    return t


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2, help="calls per engine")
    parser.add_argument("--context", type=int, default=2048)
    args = parser.parse_args()
    claims, docs = load(args.n)
    server = LlamaServer(context=args.context, threads=1)
    started = time.perf_counter()
    server.start()
    print(
        f"llama-server ready in {server.startup_s:.1f}s ({server.base_url}, -c {args.context} -t 1)"
    )
    try:
        chain = build_chain(
            LLMSettings(
                provider="openai",
                openai_api_key=SecretStr(""),
                openai_base_url=server.base_url,
                openai_model=MODEL_NAME,
                timeout_s=300,
                concurrency=1,
            ),
            encoder=None,
        )
        total = Tally()
        print(
            f"{'engine':<11} {'calls':>5} {'valid':>6} {'usable':>7} {'dropped':>8} {'fallback':>9} {'p50_s':>6} {'p95_s':>6} {'tok_in':>7} {'tok_out':>7}"
        )
        for name, run in (
            ("researcher", bench_researcher),
            ("critic", bench_critic),
            ("correlator", bench_correlator),
            ("verifier", bench_verifier),
            ("scout", bench_scout),
            ("reviewer", bench_reviewer),
        ):
            tally = await run(chain, claims, docs, args.n)
            total.add(tally)
            print(
                f"{name:<11} {tally.calls:>5} {tally.share(tally.valid):>6.2f} {tally.share(tally.usable):>7.2f} "
                f"{tally.share(tally.dropped):>8.2f} {tally.share(tally.fallback):>9.2f} {tally.p(0.5):>6.1f} "
                f"{tally.p(0.95):>6.1f} {tally.tokens_in:>7} {tally.tokens_out:>7}",
                flush=True,
            )
        rate = total.tokens_out / sum(total.seconds) if total.seconds else 0.0
        print(
            f"total: {total.calls} calls in {time.perf_counter() - started:.0f}s, tokens in/out {total.tokens_in}/"
            f"{total.tokens_out} ({rate:.1f} output tokens per second of call), evidence trimmed "
            f"{chain.providers[0].trimmed_chars} chars"  # type: ignore[attr-defined]  # the first provider is the OpenAI-compatible one, which counts the trimming
        )
        print(
            "anchor: llama-server answers /v1/models in < 2 s and generates 40-80 tokens/s with -t 1 on an idle "
            "machine (issue 26); the offline engines need no model (fallback=1.00 is their floor)"
        )
        print_summary(
            f"bench:llm model={MODEL_NAME}-Q4_1 schema_valid={total.share(total.valid):.2f} "
            f"usable={total.share(total.usable):.2f} fallback={total.share(total.fallback):.2f} p95_s={total.p(0.95):.1f}"
        )
    finally:
        server.stop()


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    asyncio.run(main())
