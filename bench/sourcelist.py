"""Source lists scored against SciFact on the full corpus, end to end through the HTTP API (`task bench:sourcelist`).

**Quality** (what a reader would judge), as a user's request runs: the whole SciFact corpus
(5,183 abstracts) ingested once into a cached data folder (`bench/full_corpus.py`, `--data-dir`),
the stack as separate processes (connector, scout, gateway; embedded nats-server and PostgreSQL on
that folder), each list asked for through `POST /api/research/v1/source-lists` and read back by
`GET …/source-lists/{id}`: the engine's own hybrid search, the scout's loop (search, judge, refine,
stop) → details (facts) → reshape (citation-checked). Each prompt is a SciFact claim, a
`facts_list` of 10 references in a workspace whose only API is the local `corpus`.

Claims: `--split train` (default) takes SciFact **train** claims of the held-out fold — claim index
mod 5 == 0, the fold the shipped judgement models were not trained on — that have annotated
evidence (every score is over them: 102 claims); `--split dev` the dev claims with evidence (99 of
the 150; run once per shipped setup). `--claims N` takes the first N (0 = all).
- gold_in_sources — share of prompts with a gold (evidence-annotated) paper among the sources
  (target ≥ 0.85);
- fact_evidence_precision — of the facts quoted from a gold abstract, the share that are
  annotated rationale sentences (a random sentence of such an abstract is one about 21 % of the
  time; target ≥ 0.8);
- empty — share of prompts (all have evidence) whose list has no source (target ≤ 0.05);
- facts per source, seconds per list (submit → snapshot readable, one list at a time).

`--env KEY=VALUE` sets a service setting for the run (e.g. `SCOUT__JUDGE=chain`, the gate chain).
`--smoke` is a SMOKE TEST only, not the benchmark: the scout's loop in process over the SciFact
corpus file searched in memory with BM25 (no database, no stack). `--demo-prompts N` (smoke
variant too): speed and format over outside sources — the connector's real sources and fan-out
answering from recorded responses (../shared/fixtures) plus the bundled demo corpus, 20 references
at each detail level per demo prompt.

Last line:

    bench:sourcelist gold_in_sources=… fact_evidence_precision=… empty=… s_per_list=… lists=… corpus=5183

Run: `.venv/bin/python bench/sourcelist.py [--split train|dev] [--claims N] [--data-dir DIR] [--env K=V] [--smoke] [--demo-prompts N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import math
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import structlog

from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.registry import EvidenceSource, build_sources
from research_connector.settings import ConnectorSettings
from research_contracts import EvidenceFound, SearchEvidence, SourceHit, TaskFilters
from research_contracts.sourcelists import DetailLevel, RequestSourceList
from research_ledger.source_limits import WorkspaceLimits
from research_reports.text import content_tokens, found_verbatim
from research_scout import prepare
from research_scout.pipeline import build
from research_scout.settings import ScoutSettings

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
from full_corpus import full_corpus_gateway, load_corpus

from bench.harness.recorded_sources import FIXTURES, HOSTS, recorded_answers
from bench.harness.results import print_summary
from bench.harness.scifact_options import add_env, add_split, service_env

CORPUS = REPO / "src" / "research_engine" / "demo_data" / "scifact_demo.jsonl"
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
PROMPTS = json.loads(
    (REPO / "src" / "research_engine" / "demo_data" / "questions.json").read_text()
)
WORKSPACE = "scifact-bench"  # its only API is the local corpus (set by the benchmark through the admin route)
WARM_UP = "vitamin D supplementation and fracture risk in older adults"  # not a SciFact claim
RANDOM_SENTENCE_ANCHOR = (
    0.213  # the held-out check: a random sentence of an annotated abstract is a rationale
)


@functools.lru_cache(maxsize=200_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    """One word's content tokens, computed once per distinct word (the full corpus has ~1M words)."""
    return tuple(content_tokens(word))


class MemoryCorpus:
    """BM25 over the demo corpus abstracts (the `corpus` source, in memory)."""

    name = "corpus"
    leaves_process = False

    def __init__(self, path: Path, k1: float = 0.9, b: float = 0.4) -> None:
        self.docs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        self.terms = [
            Counter(self._tokens(d["title"] + " " + " ".join(d["abstract"]))) for d in self.docs
        ]
        self.lengths = [sum(t.values()) for t in self.terms]
        self.avg = statistics.mean(self.lengths)
        df = Counter(term for terms in self.terms for term in terms)
        self.idf = {t: math.log(1 + (len(self.docs) - n + 0.5) / (n + 0.5)) for t, n in df.items()}
        self.k1, self.b = k1, b

    @staticmethod
    def _tokens(text: str) -> list[str]:
        return [t for w in text.split() for t in _word_tokens(w.lower())]

    async def search(
        self, query: str, filters: TaskFilters | None = None, limit: int = 10
    ) -> list[SourceHit]:
        wanted = set(self._tokens(query))
        scored = []
        for i, terms in enumerate(self.terms):
            score = sum(
                self.idf.get(t, 0)
                * terms[t]
                * (self.k1 + 1)
                / (terms[t] + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg))
                for t in wanted
                if t in terms
            )
            if score > 0:
                scored.append((score, i))
        hits = []
        for score, i in sorted(scored, reverse=True)[:limit]:
            doc = self.docs[i]
            hits.append(
                SourceHit(
                    source_id=f"corpus:{doc['doc_id']}",
                    source="corpus",
                    title=doc["title"],
                    abstract=" ".join(doc["abstract"]),
                    score=round(score, 3),
                )
            )
        return hits

    async def fetch(self, source_id: str) -> SourceHit | None:
        return None


def _recorded() -> dict[str, bytes]:
    """The recorded answers by the host (or PubMed path) they are asked for, Semantic Scholar's too."""
    answers = recorded_answers()
    by_host = {host: answers[name] for host, name in HOSTS.items()}
    return {
        "esearch": answers["esearch"],
        "efetch": answers["efetch"],
        **by_host,
        "api.semanticscholar.org": (
            FIXTURES / "semantic_scholar/danielnsilva_cassette_test_search_paper__00.json"
        ).read_bytes(),
    }


def held_out_claims(wanted: int, split: str = "train") -> list[dict]:
    """The claims with annotated evidence of `split` in file order (train: fold 0, index mod 5 == 0); 0 = all."""
    claims = [
        json.loads(line) for line in (SCIFACT / f"claims_{split}.jsonl").open() if line.strip()
    ]
    chosen = [c for i, c in enumerate(claims) if (split != "train" or i % 5 == 0) and c["evidence"]]
    return chosen[:wanted] if wanted else chosen


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def sentence_index(statement: str, sentences: list[str]) -> int | None:
    """Which SciFact sentence a fact is (facts are verbatim sentences, perhaps without a section label)."""
    wanted = _norm(statement)
    for i, sentence in enumerate(sentences):
        if wanted in _norm(sentence) or (_norm(sentence) in wanted and len(sentence) > 20):
            return i
    return None


@dataclass
class Quality:
    lists: int = 0
    empty: int = 0
    gold_found: int = 0
    sources: int = 0
    facts: int = 0
    verbatim: int = 0
    gold_facts: int = 0
    rationale_facts: int = 0
    seconds: list[float] = field(default_factory=list)


def gold_of(claim: dict) -> dict[str, list[int]]:
    """`corpus:<doc>` → the annotated rationale sentence indices of each gold abstract of a claim."""
    return {
        f"corpus:{d}": [i for sets in claim["evidence"][d] for i in sets["sentences"]]
        for d in claim["evidence"]
    }


def score_list(
    claim: dict, sources: list[dict], sentences: dict[str, list[str]], quality: Quality
) -> bool:
    """Count one list (its sources as the API shows them); whether a gold paper is among them."""
    gold = gold_of(claim)
    found = False
    for source in sources:
        origin = source["origin_id"]
        found |= origin in gold
        for fact in source.get("facts") or []:
            quality.facts += 1
            if origin in gold:
                quality.gold_facts += 1
                quality.rationale_facts += (
                    sentence_index(fact["statement"], sentences[origin]) in gold[origin]
                )
    quality.lists += 1
    quality.gold_found += found
    quality.empty += not sources
    quality.sources += len(sources)
    return found


def build_list(client, prompt: str, workspace: str, timeout: float) -> tuple[dict, float]:
    """Ask for one list through the API and wait for its snapshot: (the GET view or a failure, seconds)."""
    body = {
        "prompt": prompt,
        "num_references": 10,
        "detail_level": "facts_list",
        "workspace": workspace,
    }
    started = time.perf_counter()
    accepted = client.post("/api/research/v1/source-lists", json=body)
    if accepted.status_code >= 400:
        return {
            "status": f"refused {accepted.status_code}: {accepted.text[:200]}",
            "sources": [],
        }, 0.0
    list_id = accepted.json()["source_list_id"]
    while time.perf_counter() - started < timeout:
        time.sleep(0.25)
        got = client.get(f"/api/research/v1/source-lists/{list_id}")
        if got.status_code == 200:
            view = got.json()
            view["status"] = "completed"
            return view, time.perf_counter() - started
        detail = got.json().get("detail")
        if isinstance(detail, dict) and detail.get("status") == "failed":
            return {
                "status": f"failed: {detail.get('error')}",
                "sources": [],
            }, time.perf_counter() - started
    return {"status": "timed out", "sources": []}, time.perf_counter() - started


def at_floors(
    lists: list[tuple[dict, list[dict]]], sentences: dict[str, list[str]], floors: list[float]
) -> None:
    """What the lists would score had the partial sources under each floor been left out (a list is
    ordered strong first, then by relevance; a run with SCOUT__PARTIAL_EVIDENCE=0 holds every floor's list, and
    a strong source's relevance, P(evidence), is at least the abstract model's `best_evidence` (0.2 shipped), so
    floors up to that leave every strong source in)."""
    for floor in floors:
        quality = Quality()
        for claim, sources in lists:
            kept = [s for s in sources if s["relevance_score"] >= floor]
            score_list(claim, kept, sentences, quality)
        print(
            f"  partial floor {floor:.2f}: gold_in_sources {quality.gold_found / quality.lists:.3f}, fact_evidence_precision "
            f"{quality.rationale_facts / max(quality.gold_facts, 1):.3f}, empty {quality.empty / quality.lists:.3f}, "
            f"sources per list {quality.sources / quality.lists:.1f}"
        )


def stack_lists(
    claims: list[dict],
    quality: Quality,
    data_dir: Path | None,
    env: dict[str, str],
    timeout: float,
    floors: list[float],
) -> int:
    """The benchmark: every list through the real stack on the cached full corpus; the corpus size."""
    sentences = {f"corpus:{d}": r["abstract"] for d, r in load_corpus(SCIFACT).items()}
    services = ("connector", "scout", "gateway")
    with full_corpus_gateway(data_dir, services, env) as (client, papers):
        client.put(
            f"/api/research/v1/source-lists/limits/{WORKSPACE}",
            json={"allowed_apis": ["corpus"], "max_references": 10},
        ).raise_for_status()
        build_list(client, WARM_UP, WORKSPACE, timeout)  # the models load: not timed, not scored
        lists: list[tuple[dict, list[dict]]] = []
        for n, claim in enumerate(claims, 1):
            view, seconds = build_list(client, claim["claim"], WORKSPACE, timeout)
            quality.seconds.append(seconds)
            sources = view.get("sources") or []
            before = (quality.rationale_facts, quality.gold_facts)
            found = score_list(claim, sources, sentences, quality)
            rationale = f"{quality.rationale_facts - before[0]}/{quality.gold_facts - before[1]}"
            lists.append((claim, sources))
            why = f"  EMPTY: {view.get('note') or view['status']}" if not sources else ""
            print(
                f"{n:3}/{len(claims)} gold_in_sources={int(found)} sources={len(sources)} "
                f"facts={sum(len(s.get('facts') or []) for s in sources)} rationale={rationale} {seconds:5.1f}s  "
                f"{claim['claim'][:70]}{why}",
                flush=True,
            )
    if floors:
        print("strong sources kept, partial ones under the floor left out:")
        at_floors(lists, sentences, floors)
    return papers


async def scifact_lists(claims: list[dict], quality: Quality) -> None:
    """SMOKE TEST only: the scout's loop in process over the corpus file searched in memory (BM25)."""
    corpus = MemoryCorpus(SCIFACT / "corpus.jsonl")
    sentences = {f"corpus:{d['doc_id']}": d["abstract"] for d in corpus.docs}
    scout = ScoutSettings(max_iterations=3, per_source_limit=20)
    limits = WorkspaceLimits(allowed_apis=["corpus"])

    async def search(ask: SearchEvidence) -> EvidenceFound:
        return EvidenceFound(hits=await corpus.search(ask.query, limit=ask.limit))

    for n, claim in enumerate(claims, 1):
        brief = prepare.brief(
            RequestSourceList(
                prompt=claim["claim"], num_references=10, detail_level=DetailLevel.facts_list
            ),
            limits,
        )
        started = time.perf_counter()
        snapshot, loop, _ = await build(brief, scout, search, run_id="sl-bench")
        quality.seconds.append(time.perf_counter() - started)
        gold = {
            f"corpus:{d}": [i for sets in claim["evidence"][d] for i in sets["sentences"]]
            for d in claim["evidence"]
        }
        texts = {str(c.source_id): f"{c.hit.title}. {c.text}" for c in loop.pool.values()}
        found = False
        listed = snapshot.source_list.sources
        for source in listed:
            origin = snapshot.provenance[str(source.source_id)]["origin_id"]
            found |= origin in gold
            for fact in source.facts or []:
                quality.facts += 1
                quality.verbatim += found_verbatim(fact.statement, texts[str(source.source_id)])
                if origin in gold:
                    quality.gold_facts += 1
                    quality.rationale_facts += (
                        sentence_index(fact.statement, sentences[origin]) in gold[origin]
                    )
        quality.lists += 1
        quality.gold_found += found
        quality.empty += not listed
        quality.sources += len(listed)
        print(
            f"{n:3}/{len(claims)} gold_in_sources={int(found)} sources={len(listed)} "
            f"facts={sum(len(s.facts or []) for s in listed)} {quality.seconds[-1]:.1f}s  {claim['claim'][:70]}",
            flush=True,
        )


async def demo_lists(prompts: int, quality: Quality) -> None:
    if not FIXTURES.exists():
        sys.exit("../shared/fixtures is absent")
    bodies = _recorded()

    def handle(request: httpx.Request) -> httpx.Response:
        path, host = request.url.path, request.url.host
        key = "esearch" if "esearch" in path else "efetch" if "efetch" in path else host
        return httpx.Response(200, content=bodies[key]) if key in bodies else httpx.Response(404)

    settings = ConnectorSettings(cache_enabled=False)
    names = ["pubmed", "crossref", "europepmc", "arxiv", "semantic_scholar"]
    for name in names:
        getattr(settings, name).rate_per_s, getattr(settings, name).burst = 1e9, 10**6
    corpus = MemoryCorpus(CORPUS)
    scout = ScoutSettings(max_iterations=3, per_source_limit=20)
    limits = WorkspaceLimits(allowed_apis=[*names, "corpus"])
    timings: dict[DetailLevel, list[float]] = {level: [] for level in DetailLevel}
    async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
        registry: dict[str, EvidenceSource] = {
            **build_sources(settings, client=client, incidents=Incidents()),
            "corpus": corpus,
        }

        async def search(ask: SearchEvidence):
            return await search_all(
                ask.sources,
                ask.query,
                ask.filters,
                ask.limit,
                ask.deadline_s,
                registry=registry,
                incidents=Incidents(),
            )

        for item in PROMPTS[:prompts]:
            for level in DetailLevel:
                brief = prepare.brief(
                    RequestSourceList(
                        prompt=item["question"], num_references=20, detail_level=level
                    ),
                    limits,
                )
                started = time.perf_counter()
                snapshot, loop, _ = await build(brief, scout, search, run_id="sl-bench")
                timings[level].append(time.perf_counter() - started)
                texts = {str(c.source_id): f"{c.hit.title}. {c.text}" for c in loop.pool.values()}
                for source in snapshot.source_list.sources:
                    for fact in source.facts or []:
                        quality.facts += 1
                        quality.verbatim += found_verbatim(
                            fact.statement, texts[str(source.source_id)]
                        )
    for level, ts in timings.items():
        if ts:
            print(
                f"demo prompts, {level.value}: {statistics.mean(ts):.3f} s per list (n={len(ts)})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split(parser)
    parser.add_argument(
        "--claims",
        type=int,
        default=0,
        help="the first N claims with evidence of the split (0 = all)",
    )
    parser.add_argument(
        "--data-dir", type=Path, help="the cached full-corpus folder (bench/full_corpus.py)"
    )
    add_env(parser)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one list may take")
    parser.add_argument(
        "--floors",
        type=lambda v: [float(x) for x in v.split(",")],
        default=[],
        help="also score the lists as if partial sources under each floor (≤ best_evidence, 0.2) were left out (run "
        "with SCOUT__PARTIAL_EVIDENCE=0)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="SMOKE TEST ONLY: in process, the corpus in memory (BM25), no stack",
    )
    parser.add_argument(
        "--demo-prompts",
        type=int,
        default=0,
        help="SMOKE: demo prompts over the recorded outside sources (3 levels each)",
    )
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if not SCIFACT.exists():
        sys.exit(f"{SCIFACT} is absent")
    quality = Quality()
    claims = held_out_claims(args.claims, args.split)
    papers = 0
    if args.smoke:
        asyncio.run(scifact_lists(claims, quality))
        if args.demo_prompts:
            asyncio.run(demo_lists(args.demo_prompts, quality))
    else:
        env = service_env(args.env)
        papers = stack_lists(claims, quality, args.data_dir, env, args.timeout, args.floors)
    gold = quality.gold_found / quality.lists if quality.lists else 0.0
    precision = quality.rationale_facts / quality.gold_facts if quality.gold_facts else 0.0
    per_source = quality.facts / quality.sources if quality.sources else 0.0
    empty = quality.empty / quality.lists if quality.lists else 0.0
    seconds = statistics.mean(quality.seconds) if quality.seconds else 0.0
    print(
        f"SciFact {args.split} claims with evidence{' (train fold 0)' if args.split == 'train' else ''}: {quality.lists}; "
        f"gold paper among the sources {gold:.3f} (target 0.85); facts from gold abstracts {quality.gold_facts}, rationale "
        f"sentences {precision:.3f} (random sentence {RANDOM_SENTENCE_ANCHOR}, ratio {precision / RANDOM_SENTENCE_ANCHOR:.2f}; "
        f"target 0.8); empty lists {quality.empty} ({empty:.3f}, target ≤ 0.05); facts per source {per_source:.2f}; "
        f"seconds per list mean {seconds:.1f}, p50 {statistics.median(quality.seconds) if quality.seconds else 0.0:.1f}"
    )
    if args.smoke:
        print("SMOKE TEST (in memory, no stack), not the benchmark")
    print_summary(
        f"bench:sourcelist gold_in_sources={gold:.4f} fact_evidence_precision={precision:.4f} empty={empty:.4f} "
        f"s_per_list={seconds:.1f} lists={quality.lists} corpus={papers or 'smoke'}",
        keep=not args.smoke,
    )


if __name__ == "__main__":
    main()
