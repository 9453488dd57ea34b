"""Source lists of 20 references at each detail level, offline engine, no network.

Evidence comes from the connector's real sources and fan-out (`search_all`) answering from
recorded responses (../shared/fixtures: PubMed esearch+efetch, CrossRef, Europe PMC, arXiv,
Semantic Scholar, served by httpx.MockTransport) plus the bundled SciFact demo corpus (360
abstracts) searched in memory with BM25 — the `corpus` source without a database. Each prompt
runs the whole scout loop (judge, refine, stop) → details → reshape (citation-checked facts).

Prints seconds per list (mean, per level) and the share of facts found verbatim in their
source's text (the target is 1.0), then one line:

    bench:sourcelist facts_verbatim=<0..1> s_per_list=<s> lists=<n>

Run: `.venv/bin/python bench/sourcelist.py [--prompts N]` (needs ../shared/fixtures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import structlog

from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.registry import build_sources
from research_connector.settings import ConnectorSettings
from research_contracts import SearchEvidence, SourceHit, TaskFilters
from research_contracts.sourcelists import DetailLevel, RequestSourceList
from research_ledger.source_limits import WorkspaceLimits
from research_reports.text import content_tokens, found_verbatim
from research_scout import prepare
from research_scout.pipeline import build
from research_scout.settings import ScoutSettings

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"
CORPUS = REPO / "src" / "research_engine" / "demo_data" / "scifact_demo.jsonl"
PROMPTS = json.loads((REPO / "src" / "research_engine" / "demo_data" / "questions.json").read_text())


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
        return [t for t in (w.lower() for w in text.split()) for t in content_tokens(t)]

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


async def main(prompts: int) -> None:
    if not FIXTURES.exists():
        sys.exit("../shared/fixtures is absent")
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
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
    facts = verbatim = 0
    sizes = []
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
                sizes.append(len(snapshot.source_list.sources))
                texts = {str(c.source_id): f"{c.hit.title}. {c.text}" for c in loop.pool.values()}
                for source in snapshot.source_list.sources:
                    for fact in source.facts or []:
                        facts += 1
                        verbatim += found_verbatim(fact.statement, texts[str(source.source_id)])
    lists = sum(len(t) for t in timings.values())
    every = [t for ts in timings.values() for t in ts]
    for level, ts in timings.items():
        print(f"{level.value}: {statistics.mean(ts):.3f} s per list (n={len(ts)})")
    print(f"sources per list: mean {statistics.mean(sizes):.1f} (asked 20); facts checked: {facts}")
    share = verbatim / facts if facts else 1.0
    print(f"bench:sourcelist facts_verbatim={share:.4f} s_per_list={statistics.mean(every):.3f} lists={lists}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=len(PROMPTS), help="How many demo prompts (each at 3 levels).")
    asyncio.run(main(parser.parse_args().prompts))
