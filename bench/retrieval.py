"""SciFact retrieval benchmark of the local corpus: lexical, dense and hybrid search.

Starts a fresh embedded PostgreSQL + pgvector in a temporary folder (or reuses `--data-dir`),
ingests all 5,183 SciFact abstracts, and evaluates each mode on the BEIR queries of one split
(default: test): nDCG@10, Recall@100, p50/p95 query latency (model loaded, one query at a
time, embedding included). Prints a table with the ratio of each number to the published one
(../shared/README.md) and to the issue's targets. `--tune` grid-searches the fusion settings
on the TRAIN split only and prints the best ones.

`--backends onnx,torch` (the default in fp32) evaluates the queries once per embedding runtime,
in the same run against the same corpus (ingested with the configured runtime,
CORPUS__EMBED_BACKEND): nDCG@10 must agree to 3 decimals, and the latencies compare the runtimes
on one machine state. Queries are embedded in the configured precision (CORPUS__EMBED_PRECISION,
int8 by default, which only the onnx runtime runs: the default is then `--backends onnx`); a
`--data-dir` corpus embedded in another precision is refused (`corpus reembed` converts it).

    .venv/bin/python bench/retrieval.py [--split test] [--data-dir DIR] [--tune] [--backends onnx,torch]
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from research_corpus.search import SearchMode

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from retrieval_metrics import ANCHOR, PUBLISHED, TARGETS, ndcg_at, percentile, recall_at

from bench.harness.corpus_database import bench_database, require_scifact
from bench.harness.results import print_summary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
FAST = {
    "p95_ms": 25.0,
    "batch_300_s": 4.0,
}  # issue 30: hybrid p95 and 300 queries, with the ONNX runtime


def load_split(data: Path, split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """BEIR queries of `split` and their qrels {query-id: {corpus-id: relevance}}."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (data / "beir" / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
        qid, did, score = line.split("\t")
        qrels.setdefault(qid, {})[did] = int(score)
    queries = {}
    for line in (data / "beir" / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["_id"] in qrels:
            queries[q["_id"]] = q["text"]
    return queries, qrels


async def evaluate(
    sessions, queries, qrels, mode: SearchMode, settings, embedder
) -> dict[str, float]:
    from research_corpus.search import query_vectors, search

    # Each mode embeds its queries itself (`embedder` is a plain model, no vector cache): a vector
    # cached by the mode before would hide the embedding from this mode's latencies.
    ndcgs, recalls, latencies = [], [], []
    for qid, text in queries.items():
        started = time.perf_counter()
        vector = (
            query_vectors([text], embedder, settings)[0].tolist() if mode != "lexical" else None
        )
        async with sessions() as session:
            hits = await search(
                session,
                text,
                k=100,
                mode=mode,
                settings=settings,
                vector=vector,
                model=embedder.model_id,
            )
        latencies.append((time.perf_counter() - started) * 1000)
        ranking = [h.external_id for h in hits]
        ndcgs.append(ndcg_at(ranking, qrels[qid], 10))
        recalls.append(recall_at(ranking, qrels[qid], 100))
    return {
        "ndcg@10": statistics.fmean(ndcgs),
        "recall@100": statistics.fmean(recalls),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
    }


async def batch_seconds(
    sessions, queries: dict[str, str], qrels, settings, backend: str
) -> tuple[int, float, float]:
    """(queries, seconds, nDCG@10) for up to 300 queries searched as one batch, model load included."""
    from research_corpus.embedding import Embedder
    from research_corpus.search import search_many

    batch = list(queries.items())[:300]
    started = time.perf_counter()
    embedder = Embedder(
        settings.model_path,
        batch_size=settings.embed_batch_size,
        backend=backend,  # a fresh load, timed
        threads=settings.embed_threads,
        cache_dir=settings.onnx_cache_dir,
        precision=settings.embed_precision,
    )
    results = await search_many(
        sessions, [t for _, t in batch], k=100, settings=settings, embedder=embedder
    )
    seconds = time.perf_counter() - started
    ndcg = statistics.fmean(
        ndcg_at([h.external_id for h in hits], qrels[qid], 10)
        for (qid, _), hits in zip(batch, results, strict=True)
    )
    return len(batch), seconds, ndcg


def print_table(split: str, results: dict[str, dict[str, float]], ingest: str) -> None:
    print(f"\nSciFact BEIR {split} split — {ingest}")
    header = f"{'mode':8} {'nDCG@10':>8} {'vs published':>22} {'R@100':>7} {'vs target':>10} {'p50 ms':>7} {'p95 ms':>7} {'vs target':>10}"
    print(header)
    print("-" * len(header))
    for mode, r in results.items():
        pub_name, pub = PUBLISHED[mode]
        print(
            f"{mode:8} {r['ndcg@10']:8.4f} {r['ndcg@10'] / pub:7.3f}x {pub_name:>13} {r['recall@100']:7.4f} "
            f"{r['recall@100'] / TARGETS['recall@100']:9.3f}x {r['p50_ms']:7.1f} {r['p95_ms']:7.1f} "
            f"{TARGETS['p95_ms'] / r['p95_ms']:9.2f}x"
        )
    if "hybrid" in results:
        h = results["hybrid"]
        print(
            f"\ntargets (hybrid): nDCG@10 >= {TARGETS['ndcg@10']} -> {'met' if h['ndcg@10'] >= TARGETS['ndcg@10'] else 'MISSED'}"
            f", Recall@100 >= {TARGETS['recall@100']} -> {'met' if h['recall@100'] >= TARGETS['recall@100'] else 'MISSED'}"
            f", p95 <= {TARGETS['p95_ms']} ms -> {'met' if h['p95_ms'] <= TARGETS['p95_ms'] else 'MISSED'}"
        )
        print(
            f"vs anchor (hybrid nDCG@10 {ANCHOR['ndcg@10']}, R@100 {ANCHOR['recall@100']}): "
            f"{h['ndcg@10'] / ANCHOR['ndcg@10']:.3f}x, {h['recall@100'] / ANCHOR['recall@100']:.3f}x"
        )


async def run(args: argparse.Namespace, database_url: str) -> None:
    from research_corpus.embedding import get_embedder
    from research_corpus.ingest import ingest_path
    from research_platform.db import create_engine, session_factory
    from research_platform.settings import get_settings

    engine = create_engine(database_url)
    sessions = session_factory(engine)
    settings = get_settings().corpus
    started = time.perf_counter()
    report = await ingest_path(
        sessions,
        args.data / "corpus.jsonl",
        fmt="scifact",
        progress=not args.quiet,
        chunk_words=settings.chunk_words,
    )
    took = time.perf_counter() - started
    ingest = (
        f"ingest: {report.added} added, {report.unchanged} unchanged, {report.chunks} chunks, "
        f"{len(report.errors)} errors in {took:.0f} s"
    )
    print(ingest)
    get_embedder().embed_one("warm-up")
    if args.depths:
        await depth_table(sessions, args, settings)
    elif args.tune:
        from retrieval_tuning import tune

        train_queries, train_qrels = load_split(args.data, "train")
        await tune(sessions, train_queries, train_qrels, settings)
    else:
        from research_corpus.embedding import Embedder

        queries, qrels = load_split(args.data, args.split)
        for backend in args.backends.split(","):
            embedder = Embedder(
                settings.model_path,
                batch_size=settings.embed_batch_size,
                backend=backend,
                threads=settings.embed_threads,
                cache_dir=settings.onnx_cache_dir,
                precision=settings.embed_precision,
            )
            embedder.embed_one("warm-up")
            results = {
                mode: await evaluate(sessions, queries, qrels, mode, settings, embedder)
                for mode in args.modes
            }
            print_table(args.split, results, f"{ingest}; queries embedded by {embedder.backend}")
            n, seconds, batch_ndcg = await batch_seconds(
                sessions, queries, qrels, settings, backend
            )
            print(
                f"batch: {n} queries in {seconds:.1f} s including model load (target <= {FAST['batch_300_s']} s -> "
                f"{'met' if seconds <= FAST['batch_300_s'] else 'MISSED'}), nDCG@10 {batch_ndcg:.4f}"
            )
            if "hybrid" in results:
                h = results["hybrid"]
                print(
                    f"hybrid p95 {h['p95_ms']:.1f} ms (target <= {FAST['p95_ms']} ms -> "
                    f"{'met' if h['p95_ms'] <= FAST['p95_ms'] else 'MISSED'}); load average {os.getloadavg()[0]:.1f}"
                )
                print_summary(
                    f"bench:retrieval split={args.split} backend={embedder.backend} precision={embedder.precision} adapter={'on' if settings.query_adapter else 'off'} "
                    f"ndcg10={h['ndcg@10']:.4f} recall100={h['recall@100']:.4f} "
                    f"ndcg_vs_anchor={h['ndcg@10'] / ANCHOR['ndcg@10']:.3f} recall_vs_anchor={h['recall@100'] / ANCHOR['recall@100']:.3f} "
                    f"p50_ms={h['p50_ms']:.1f} p95_ms={h['p95_ms']:.1f} batch{n}_s={seconds:.1f}",
                )
    await engine.dispose()


async def depth_table(sessions: Any, args: argparse.Namespace, settings: Any) -> None:
    """nDCG@10, recall@100 and latency of lexical and hybrid search at each lexical depth.

    The depth (postings of highest impact read per query lexeme; 0 = all) is chosen on TRAIN:
    the smallest whose hybrid nDCG@10 is within 0.002 of reading every posting."""
    from research_corpus.embedding import get_embedder

    queries, qrels = load_split(args.data, args.split)
    rows = []
    depth_modes: tuple[SearchMode, ...] = ("lexical", "hybrid")
    for depth in args.depths:
        tuned = settings.model_copy(update={"lexical_depth": depth})
        results = {
            mode: await evaluate(sessions, queries, qrels, mode, tuned, get_embedder())
            for mode in depth_modes
        }
        rows.append((depth, results))
        lex, hyb = results["lexical"], results["hybrid"]
        print(
            f"depth {depth or 'all':>5}: lexical nDCG@10 {lex['ndcg@10']:.4f} R@100 {lex['recall@100']:.4f}"
            f" p50/p95 {lex['p50_ms']:.1f}/{lex['p95_ms']:.1f} ms | hybrid nDCG@10 {hyb['ndcg@10']:.4f}"
            f" R@100 {hyb['recall@100']:.4f} p50/p95 {hyb['p50_ms']:.1f}/{hyb['p95_ms']:.1f} ms"
            f" (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    exhaustive = dict(rows).get(0)
    if exhaustive is not None:
        full = exhaustive["hybrid"]["ndcg@10"]
        kept = sorted(d for d, r in rows if d and r["hybrid"]["ndcg@10"] >= full - 0.002)
        print_summary(
            f"bench:retrieval-depth split={args.split} ndcg10_all={full:.4f} "
            f"smallest_depth_within_0.002={kept[0] if kept else 'none'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", default="test", choices=["test", "train"])
    parser.add_argument("--modes", nargs="+", default=["lexical", "dense", "hybrid"])
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="Reuse this embedded database folder instead of a temporary one.",
    )
    parser.add_argument(
        "--database-url", help="Use this (already migrated or migratable) database instead."
    )
    parser.add_argument(
        "--tune", action="store_true", help="Grid-search fusion settings on the TRAIN split."
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--depths",
        type=lambda v: [int(x) for x in v.split(",")],
        help="Comma-separated lexical depths to compare (0 = every posting), e.g. 250,500,1000,0.",
    )
    parser.add_argument(
        "--backends",
        default=None,
        help="Embedding runtimes the queries are embedded with, in turn (default: onnx,torch in fp32, onnx in int8).",
    )
    args = parser.parse_args()
    if args.backends is None:
        from research_platform.settings import get_settings

        args.backends = "onnx,torch" if get_settings().corpus.embed_precision == "fp32" else "onnx"
    require_scifact(args.data)
    with bench_database(
        args.database_url, args.data_dir, "re-bench-retrieval-", stop_reused=False
    ) as url:
        asyncio.run(run(args, url))


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
