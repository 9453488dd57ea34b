"""SciFact (BEIR test) retrieval with and without the trained relevance rerank.

Starts a fresh embedded PostgreSQL + pgvector (or reuses `--data-dir`), ingests the 5,183
SciFact abstracts, runs hybrid search (k=100) for every query, then reorders the top 20 and the
top 50 by `research_judgement.relevance` (question × title + abstract), alone and fused with the
search's order (`research_judgement.rerank`). Printed: nDCG@10 and Recall@100 of hybrid and of
each rerank, and the rerank's milliseconds per query on this machine (cross-encoder only, one
query at a time, model loaded). Two query sets: the BEIR train queries of the claims the
relevance model never trained on (train claim index mod 5 == 0) — the one that selects the
method reported — and BEIR test, never used for training or selection.

    .venv/bin/python bench/rerank.py [--data-dir DIR] [--tops 20 50] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from retrieval import DATA, load_split
from retrieval_metrics import ndcg_at, recall_at

from bench.harness.corpus_database import bench_database, require_scifact
from bench.harness.results import print_summary

ANCHORS = (
    "hybrid + query adapter (this engine, before this issue): nDCG@10 0.7655 on SciFact BEIR test",
    "BGE-base (published BEIR SciFact nDCG@10): 0.741",
    "target of issue 25: reranked nDCG@10 >= 0.78, rerank of the top 20 <= 150 ms per query on 2 cores",
)


async def run(args: argparse.Namespace, database_url: str) -> None:
    import torch

    from research_corpus.ingest import ingest_path
    from research_corpus.search import search_many
    from research_judgement import get_judge
    from research_judgement.rerank import rerank_hits
    from research_platform.db import create_engine, session_factory
    from research_platform.settings import get_settings

    torch.set_num_threads(int(os.environ.get("JUDGEMENT_THREADS", "2")))
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    settings = get_settings().corpus
    t0 = time.perf_counter()
    report = await ingest_path(
        sessions,
        args.data / "corpus.jsonl",
        fmt="scifact",
        progress=False,
        chunk_words=settings.chunk_words,
    )
    print(
        f"ingest: {report.added} added, {report.unchanged} unchanged in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    splits = {}
    for split in ("train-heldout", "test"):
        queries, qrels = (
            heldout_train(args.data) if split == "train-heldout" else load_split(args.data, "test")
        )
        items = list(queries.items())[: args.limit or None]
        splits[split] = (
            items,
            qrels,
            await search_many(sessions, [t for _, t in items], k=100, settings=settings),
        )
    await engine.dispose()
    judge = get_judge()
    judge.relevance("warm-up", [("warm", "up")])  # loads the model
    table: dict[str, dict[str, tuple[list[float], list[float], list[float]]]] = {}
    for split, (items, qrels, results) in splits.items():
        rows = table[split] = {"hybrid": ([], [], [])}
        for (qid, text), hits in zip(items, results, strict=True):
            ranking = [h.external_id for h in hits]
            rows["hybrid"][0].append(ndcg_at(ranking, qrels[qid], 10))
            rows["hybrid"][1].append(recall_at(ranking, qrels[qid], 100))
            for top in args.tops:
                for method in ("relevance", "fused"):
                    judge._cache.clear()  # every query timed cold: no (question, passage) pair reused
                    started = time.perf_counter()
                    reranked = rerank_hits(text, hits, top, method=method)
                    ms = (time.perf_counter() - started) * 1000
                    ranking = [h.external_id for h in reranked]
                    r = rows.setdefault(f"{method}{top}", ([], [], []))
                    r[0].append(ndcg_at(ranking, qrels[qid], 10))
                    r[1].append(recall_at(ranking, qrels[qid], 100))
                    r[2].append(ms)
        print(
            f"\nSciFact BEIR {split}, {len(items)} queries (hybrid k=100, settings as shipped: query adapter "
            f"{'on' if settings.query_adapter else 'off'})"
        )
        print(f"{'ranking':12} {'nDCG@10':>8} {'R@100':>7} {'ms/query':>9}")
        for name, (nd, rc, waits) in rows.items():
            print(
                f"{name:12} {statistics.fmean(nd):8.4f} {statistics.fmean(rc):7.4f} {statistics.fmean(waits) if waits else 0.0:9.1f}"
            )
    top = args.tops[0]
    held = table["train-heldout"]
    method = max(("relevance", "fused"), key=lambda m: statistics.fmean(held[f"{m}{top}"][0]))
    print(
        f"\nselected on the held-out train queries (top {top}): {method} "
        f"(shipped default of research_judgement.rerank.rerank_hits: fused)"
    )
    print("anchors:")
    for a in ANCHORS:
        print(f"  {a}")
    rows = table["test"]
    print_summary(
        f"bench:rerank ndcg10_hybrid={statistics.fmean(rows['hybrid'][0]):.4f} ndcg10_rerank={statistics.fmean(rows[f'{method}{top}'][0]):.4f} "
        f"recall100={statistics.fmean(rows['hybrid'][1]):.4f} ms_per_query={statistics.fmean(rows[f'{method}{top}'][2]):.1f} top={top} "
        f"method={method}"
        + "".join(
            f" ndcg10_{m}{t}={statistics.fmean(rows[f'{m}{t}'][0]):.4f}"
            for t in args.tops
            for m in ("relevance", "fused")
        )
    )


def heldout_train(data: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """BEIR train queries of the claims the relevance model never trained on (train claim index mod 5 == 0)."""
    queries, qrels = load_split(data, "train")
    ids = [
        json.loads(line)["id"]
        for line in (data / "claims_train.jsonl").read_text().splitlines()
        if line.strip()
    ]
    held = {str(i) for k, i in enumerate(ids) if k % 5 == 0}
    return {q: t for q, t in queries.items() if q in held}, qrels


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--data-dir", type=Path, help="Reuse this embedded database folder (ingest is idempotent)."
    )
    parser.add_argument("--database-url")
    parser.add_argument("--tops", type=int, nargs="+", default=[20, 50])
    parser.add_argument(
        "--limit", type=int, default=0, help="only the first N test queries (smoke runs)"
    )
    args = parser.parse_args()
    require_scifact(args.data)
    with bench_database(args.database_url, args.data_dir, "re-bench-rerank-") as url:
        asyncio.run(run(args, url))


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
