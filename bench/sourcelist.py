"""Source lists scored against SciFact, offline engine, no network (`task bench:sourcelist`).

**Quality** (what a reader would judge): the prompts are SciFact **train** claims of the held-out
fold — claim index mod 5 == 0, the fold the shipped judgement models were not trained on — that
have annotated evidence, `--claims` of them in file order, each the prompt of a `facts_list`
source list of 10 references over the whole SciFact corpus (5,183 abstracts) searched in memory
with BM25 (the `corpus` source without a database). Each list runs the whole scout loop (judge
by relevance, refine, stop) → details (facts by the evidence model) → reshape (citation-checked).
- gold_in_sources — share of prompts with a gold (evidence-annotated) paper among the sources
  (target ≥ 0.85);
- fact_evidence_precision — of the facts quoted from a gold abstract, the share that are
  annotated rationale sentences (a random sentence of such an abstract is one about 21 % of the
  time; target ≥ 0.8);
- facts per source, facts found verbatim in their source (target 1.0), seconds per list.

**Speed and format** over outside sources (`--demo-prompts N`, default 0): the connector's real
sources and fan-out (`search_all`) answering from recorded responses (../shared/fixtures: PubMed
esearch+efetch, CrossRef, Europe PMC, arXiv, Semantic Scholar, served by httpx.MockTransport) plus
the bundled demo corpus, 20 references at each detail level per demo prompt.

Last line:

    bench:sourcelist lists=<n> gold_in_sources=<0..1> fact_evidence_precision=<0..1> facts_per_source=<n> facts_verbatim=<0..1> s_per_list=<s>

Run: `.venv/bin/python bench/sourcelist.py [--claims 30] [--demo-prompts N]`.
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
from research_connector.registry import build_sources
from research_connector.settings import ConnectorSettings
from research_contracts import EvidenceFound, SearchEvidence, SourceHit, TaskFilters
from research_contracts.sourcelists import DetailLevel, RequestSourceList
from research_ledger.source_limits import WorkspaceLimits
from research_reports.text import content_tokens, found_verbatim
from research_scout import prepare
from research_scout.pipeline import build
from research_scout.settings import ScoutSettings

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"
CORPUS = REPO / "src" / "research_engine" / "demo_data" / "scifact_demo.jsonl"
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
PROMPTS = json.loads((REPO / "src" / "research_engine" / "demo_data" / "questions.json").read_text())
RANDOM_SENTENCE_ANCHOR = 0.213  # the held-out check: a random sentence of an annotated abstract is a rationale


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
        self.terms = [Counter(self._tokens(d["title"] + " " + " ".join(d["abstract"]))) for d in self.docs]
        self.lengths = [sum(t.values()) for t in self.terms]
        self.avg = statistics.mean(self.lengths)
        df = Counter(term for terms in self.terms for term in terms)
        self.idf = {t: math.log(1 + (len(self.docs) - n + 0.5) / (n + 0.5)) for t, n in df.items()}
        self.k1, self.b = k1, b

    @staticmethod
    def _tokens(text: str) -> list[str]:
        return [t for w in text.split() for t in _word_tokens(w.lower())]

    async def search(self, query: str, filters: TaskFilters | None = None, limit: int = 10) -> list[SourceHit]:
        wanted = set(self._tokens(query))
        scored = []
        for i, terms in enumerate(self.terms):
            score = sum(self.idf.get(t, 0) * terms[t] * (self.k1 + 1)
                        / (terms[t] + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)) for t in wanted if t in terms)
            if score > 0:
                scored.append((score, i))
        hits = []
        for score, i in sorted(scored, reverse=True)[:limit]:
            doc = self.docs[i]
            hits.append(SourceHit(source_id=f"corpus:{doc['doc_id']}", source="corpus", title=doc["title"],
                                  abstract=" ".join(doc["abstract"]), score=round(score, 3)))
        return hits

    async def fetch(self, source_id: str) -> SourceHit | None:
        return None


def _recorded() -> dict[str, bytes]:
    read = lambda name: (FIXTURES / name).read_bytes()  # noqa: E731
    return {
        "esearch": b'{"esearchresult": {"idlist": ["22351513", "29915538"]}}',
        "efetch": read("pubmed/biocommons_cassette_efetch_pubmed_22351513__00.xml").replace(b"</PubmedArticleSet>", b"")
        + read("pubmed/biocommons_cassette_efetch_pubmed_29915538__00.xml").split(b"<PubmedArticleSet>", 1)[1],
        "api.crossref.org": read("crossref/habanero_cassette_test_works_query__00.json"),
        "www.ebi.ac.uk": read("europepmc/fastpaper_europepmc_search.json"),
        "export.arxiv.org": read("arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.body.atom.xml"),
        "api.semanticscholar.org": read("semantic_scholar/danielnsilva_cassette_test_search_paper__00.json"),
    }


def held_out_claims(wanted: int) -> list[dict]:
    """Fold 0 of the train claims (index mod 5 == 0) with annotated evidence, in file order."""
    claims = [json.loads(line) for line in (SCIFACT / "claims_train.jsonl").open() if line.strip()]
    return [c for i, c in enumerate(claims) if i % 5 == 0 and c["evidence"]][:wanted]


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
    gold_found: int = 0
    sources: int = 0
    facts: int = 0
    verbatim: int = 0
    gold_facts: int = 0
    rationale_facts: int = 0
    seconds: list[float] = field(default_factory=list)


async def scifact_lists(claims: list[dict], quality: Quality) -> None:
    corpus = MemoryCorpus(SCIFACT / "corpus.jsonl")
    sentences = {f"corpus:{d['doc_id']}": d["abstract"] for d in corpus.docs}
    scout = ScoutSettings(max_iterations=3, per_source_limit=20)
    limits = WorkspaceLimits(allowed_apis=["corpus"])

    async def search(ask: SearchEvidence) -> EvidenceFound:
        return EvidenceFound(hits=await corpus.search(ask.query, limit=ask.limit))

    for n, claim in enumerate(claims, 1):
        brief = prepare.brief(RequestSourceList(prompt=claim["claim"], num_references=10, detail_level=DetailLevel.facts_list), limits)
        started = time.perf_counter()
        snapshot, loop, _ = await build(brief, scout, search, run_id="sl-bench")
        quality.seconds.append(time.perf_counter() - started)
        gold = {f"corpus:{d}": [i for sets in claim["evidence"][d] for i in sets["sentences"]] for d in claim["evidence"]}
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
                    quality.rationale_facts += sentence_index(fact.statement, sentences[origin]) in gold[origin]
        quality.lists += 1
        quality.gold_found += found
        quality.sources += len(listed)
        print(f"{n:3}/{len(claims)} gold_in_sources={int(found)} sources={len(listed)} "
              f"facts={sum(len(s.facts or []) for s in listed)} {quality.seconds[-1]:.1f}s  {claim['claim'][:70]}", flush=True)


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
        registry = {**build_sources(settings, client=client, incidents=Incidents()), "corpus": corpus}

        async def search(ask: SearchEvidence):
            return await search_all(ask.sources, ask.query, ask.filters, ask.limit, ask.deadline_s,
                                    registry=registry, incidents=Incidents())

        for item in PROMPTS[:prompts]:
            for level in DetailLevel:
                brief = prepare.brief(RequestSourceList(prompt=item["question"], num_references=20, detail_level=level), limits)
                started = time.perf_counter()
                snapshot, loop, _ = await build(brief, scout, search, run_id="sl-bench")
                timings[level].append(time.perf_counter() - started)
                texts = {str(c.source_id): f"{c.hit.title}. {c.text}" for c in loop.pool.values()}
                for source in snapshot.source_list.sources:
                    for fact in source.facts or []:
                        quality.facts += 1
                        quality.verbatim += found_verbatim(fact.statement, texts[str(source.source_id)])
    for level, ts in timings.items():
        if ts:
            print(f"demo prompts, {level.value}: {statistics.mean(ts):.3f} s per list (n={len(ts)})")


async def main(claims: int, demo_prompts: int) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    quality = Quality()
    if claims:
        if not SCIFACT.exists():
            sys.exit(f"{SCIFACT} is absent")
        await scifact_lists(held_out_claims(claims), quality)
    if demo_prompts:
        await demo_lists(demo_prompts, quality)
    gold = quality.gold_found / quality.lists if quality.lists else 0.0
    precision = quality.rationale_facts / quality.gold_facts if quality.gold_facts else 0.0
    per_source = quality.facts / quality.sources if quality.sources else 0.0
    verbatim = quality.verbatim / quality.facts if quality.facts else 1.0
    seconds = statistics.mean(quality.seconds) if quality.seconds else 0.0
    print(f"SciFact held-out prompts: {quality.lists}; gold paper among the sources {gold:.3f} (target 0.85); "
          f"facts from gold abstracts {quality.gold_facts}, rationale sentences {precision:.3f} "
          f"(random sentence {RANDOM_SENTENCE_ANCHOR}, ratio {precision / RANDOM_SENTENCE_ANCHOR:.2f}; target 0.8); "
          f"facts per source {per_source:.2f}")
    print(f"bench:sourcelist lists={quality.lists} gold_in_sources={gold:.4f} fact_evidence_precision={precision:.4f} "
          f"facts_per_source={per_source:.2f} facts_verbatim={verbatim:.4f} s_per_list={seconds:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=30, help="held-out SciFact train claims (fold 0) as prompts")
    parser.add_argument("--demo-prompts", type=int, default=0, help="demo prompts over the recorded outside sources (each at 3 levels)")
    args = parser.parse_args()
    asyncio.run(main(args.claims, args.demo_prompts))
