"""Train (and cross-validate) the query adapter over MiniLM on the SciFact TRAIN split only.

The adapter is a 384×384 linear map W = I + D applied to a query's MiniLM vector before the
dense kNN (the corpus's chunk vectors are unchanged, so nothing is re-embedded). It is trained
with a softmax over each query's relevant chunks (positives) and its 300 hardest negatives by
plain cosine, temperature `tau`, and an L2 pull of D towards 0 so the map stays close to the
identity. 5-fold cross-validation on TRAIN scores the HYBRID ranking (the real BM25 SQL run once
per query, exact-cosine dense ranking in numpy, the real `fuse`) at several dense weights and
RRF constants, with and without the adapter, and picks the settings; the final map is
trained on all TRAIN queries and written to `research_corpus/data/query_adapter.npz` with its
provenance. The test split is never read here.

SciFact (Wadden et al. 2020) is CC BY-NC 2.0: the adapter is derived from its train claims and
qrels (see research_corpus/data/ATTRIBUTION.md).

    .venv/bin/python bench/retrieval_adapter.py --data-dir /tmp/re-retrieval-db [--quick] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from retrieval import DATA, load_split
from retrieval_metrics import ndcg_at, recall_at

from bench.harness.corpus_database import embedded_database

GRID = [(tau, reg, steps) for tau in (0.05,) for reg in (0.01, 0.1) for steps in (100, 300)]
DENSE_WEIGHTS = (0.8, 1.0, 1.25, 1.5, 2.0)  # fusion retuned with the adapter, on TRAIN folds only
RRF_KS = (2, 5, 10, 20, 60)
FUSIONS = [(w, k) for w in DENSE_WEIGHTS for k in RRF_KS]
CANDIDATES = 300  # hard negatives per query: its best chunks by plain MiniLM cosine


async def load_corpus(sessions):
    from sqlalchemy import text

    async with sessions() as session:
        rows = (
            await session.execute(
                text(
                    "SELECT c.id, c.paper_id, p.external_id, c.embedding::text FROM corpus_chunks c "
                    "JOIN corpus_papers p ON p.id = c.paper_id ORDER BY c.id"
                )
            )
        ).all()
    chunk_ids = np.array([r[0] for r in rows])
    chunk_paper = np.array([r[1] for r in rows])
    names = {r[1]: r[2] for r in rows}
    vectors = np.array([np.array(r[3][1:-1].split(","), dtype=np.float32) for r in rows])
    return chunk_ids, chunk_paper, names, vectors


async def lexical_runs(sessions, queries: dict[str, str], settings, limit: int) -> dict[str, list]:
    """Each TRAIN query's BM25 chunk ranking, run once through the real SQL (settings as configured)."""
    from research_corpus.search import SearchFilters, lexical_chunks

    runs = {}
    for qid, query in queries.items():
        async with sessions() as session, session.begin():
            runs[qid] = await lexical_chunks(session, query, limit, SearchFilters(), settings)
    return runs


def train(
    queries: np.ndarray,
    candidates: np.ndarray,
    positive: np.ndarray,
    chunks: np.ndarray,
    tau: float,
    reg: float,
    steps: int,
    seed: int = 0,
) -> np.ndarray:
    """D (384×384) minimising −log Σ_pos softmax(cos(Wq, c)/tau) + reg·‖D‖².

    The softmax runs over each query's `candidates` (its positives plus its hardest negatives by
    plain cosine), not the whole corpus: on this CPU a full-corpus step costs seconds, this one
    milliseconds, and the far negatives contribute almost nothing to the gradient.
    """
    import torch

    torch.manual_seed(seed)
    q = torch.tensor(queries)
    cand = torch.tensor(chunks[candidates])  # (n, m, 384)
    mask = torch.tensor(positive)
    delta = torch.zeros(q.shape[1], q.shape[1], requires_grad=True)
    optimiser = torch.optim.Adam([delta], lr=1e-3)
    for _ in range(steps):
        adapted = torch.nn.functional.normalize(q + q @ delta, dim=1)
        logits = torch.einsum("nd,nmd->nm", adapted, cand) / tau
        log_norm = torch.logsumexp(logits, dim=1)
        log_pos = torch.logsumexp(logits.masked_fill(~mask, float("-inf")), dim=1)
        loss = (log_norm - log_pos).mean() + reg * (delta**2).sum()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return delta.detach().numpy()


def adapt(vectors: np.ndarray, delta: np.ndarray | None) -> np.ndarray:
    if delta is None:
        return vectors
    out = vectors + vectors @ delta
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def dense_runs(
    vectors: np.ndarray,
    chunks: np.ndarray,
    chunk_ids: np.ndarray,
    chunk_paper: np.ndarray,
    limit: int,
) -> list[list]:
    """Exact cosine chunk rankings (the database uses HNSW: near-identical at this size)."""
    from research_corpus.ranking import ChunkHit

    sims = vectors @ chunks.T
    top = np.argpartition(-sims, limit, axis=1)[:, :limit]
    runs = []
    for row, candidates in zip(sims, top, strict=True):
        ranked = candidates[np.argsort(-row[candidates], kind="stable")]
        runs.append(
            [ChunkHit(int(chunk_ids[i]), int(chunk_paper[i]), float(row[i])) for i in ranked]
        )
    return runs


def score(
    ids, dense, lexical, names, qrels, settings, fusion: tuple[float, int] | None
) -> tuple[float, float]:
    """nDCG@10, R@100 of the hybrid fusion at (dense_weight, rrf_k), or of dense alone when `fusion` is None."""
    from research_corpus.ranking import fuse, rank_papers

    if fusion is not None:
        fused_settings = settings.model_copy(update={"dense_weight": fusion[0], "rrf_k": fusion[1]})
    ndcgs, recalls = [], []
    for qid, run in zip(ids, dense, strict=True):
        if fusion is None:
            ranked = rank_papers(run, 100, "dense")
        else:
            ranked = fuse(lexical[qid], run, fused_settings, max(settings.candidates, 100))
        ranking = [names[r.paper_id] for r in ranked]
        ndcgs.append(ndcg_at(ranking, qrels[qid], 10))
        recalls.append(recall_at(ranking, qrels[qid], 100))
    return statistics.fmean(ndcgs), statistics.fmean(recalls)


async def run(args: argparse.Namespace, url: str) -> None:
    from research_corpus.embedding import get_embedder
    from research_platform.db import create_engine, session_factory
    from research_platform.settings import get_settings

    settings = get_settings().corpus
    limit = (
        max(settings.candidates, 100) * 2
    )  # what search() fetches per ranking (CHUNKS_PER_PAPER = 2)
    engine = create_engine(url)
    sessions = session_factory(engine)
    queries, qrels = load_split(args.data, "train")
    lexical = await lexical_runs(sessions, queries, settings, limit)
    chunk_ids, chunk_paper, names, chunks = await load_corpus(
        sessions
    )  # after: a superset of the lexical hits
    await engine.dispose()
    row_of_paper: dict[str, list[int]] = {}
    for idx, pid in enumerate(chunk_paper):
        row_of_paper.setdefault(names[int(pid)], []).append(idx)
    ids = list(queries)
    qvecs = get_embedder().embed([queries[q] for q in ids])
    positives = [
        [i for d, g in qrels[q].items() if g > 0 for i in row_of_paper.get(d, [])] for q in ids
    ]
    keep = [i for i, p in enumerate(positives) if p]
    ids, qvecs, positives = [ids[i] for i in keep], qvecs[keep], [positives[i] for i in keep]
    # Candidate sets: positives first, then the hardest negatives by plain cosine, padded to one width.
    sims = qvecs @ chunks.T
    width = CANDIDATES + max(len(p) for p in positives)
    candidates = np.zeros((len(ids), width), dtype=np.int64)
    positive = np.zeros((len(ids), width), dtype=bool)
    for n, (row, pos) in enumerate(zip(sims, positives, strict=True)):
        hard = [int(i) for i in np.argsort(-row)[:width] if int(i) not in set(pos)][
            : width - len(pos)
        ]
        candidates[n] = pos + hard
        positive[n, : len(pos)] = True
    base = dense_runs(qvecs, chunks, chunk_ids, chunk_paper, limit)
    current = (settings.dense_weight, settings.rrf_k)
    dense_ndcg, dense_recall = score(ids, base, lexical, names, qrels, settings, None)
    hybrid_ndcg, hybrid_recall = score(ids, base, lexical, names, qrels, settings, current)
    print(
        f"TRAIN: {len(ids)} queries, corpus {len(chunks)} chunks; no adapter (all train queries, no fitting): "
        f"dense nDCG@10/R@100 {dense_ndcg:.4f}/{dense_recall:.4f}; "
        f"hybrid at the configured w={current[0]} rrf_k={current[1]} {hybrid_ndcg:.4f}/{hybrid_recall:.4f}",
        flush=True,
    )
    folds = np.arange(len(ids)) % 5
    results = []
    for tau, reg, steps in [(None, None, 0), *args.grid]:
        per_fusion: dict[tuple[float, int] | None, list[tuple[float, float]]] = {
            w: [] for w in (None, *FUSIONS)
        }
        for f in range(5):
            tr, te = np.where(folds != f)[0], np.where(folds == f)[0]
            delta = (
                None
                if tau is None
                else train(qvecs[tr], candidates[tr], positive[tr], chunks, tau, reg, steps)
            )
            dense = dense_runs(adapt(qvecs[te], delta), chunks, chunk_ids, chunk_paper, limit)
            for w, fold_scores in per_fusion.items():
                fold_scores.append(
                    score([ids[i] for i in te], dense, lexical, names, qrels, settings, w)
                )
        cells, rows = [], []
        for w, fold_scores in per_fusion.items():
            ndcg, rec = (
                statistics.fmean(s[0] for s in fold_scores),
                statistics.fmean(s[1] for s in fold_scores),
            )
            if w is None:
                cells.append(f"dense {ndcg:.4f}/{rec:.4f}")
            else:
                rows.append((ndcg, rec, tau, reg, steps, w))
        rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
        cells += [f"hybrid w={r[5][0]} rrf_k={r[5][1]} {r[0]:.4f}/{r[1]:.4f}" for r in rows[:3]]
        results += rows
        print(
            f"  tau={tau} reg={reg} steps={steps}: 5-fold CV nDCG@10/R@100 " + "; ".join(cells),
            flush=True,
        )
    best = lambda rows: max(rows, key=lambda r: (r[0], r[1]))
    baseline = best([r for r in results if r[2] is None])
    ndcg, rec, tau, reg, steps, weight = best(results)
    print(
        f"best without adapter (CV): dense_weight={baseline[5][0]} rrf_k={baseline[5][1]} "
        f"hybrid nDCG@10 {baseline[0]:.4f} R@100 {baseline[1]:.4f}"
    )
    print(
        f"best on TRAIN (CV): tau={tau} reg={reg} steps={steps} dense_weight={weight[0]} rrf_k={weight[1]} "
        f"hybrid nDCG@10 {ndcg:.4f} R@100 {rec:.4f}  (CORPUS__DENSE_WEIGHT={weight[0]} CORPUS__RRF_K={weight[1]})"
    )
    if args.write and tau is not None:
        from research_corpus.query_adapter import ADAPTER_PATH

        delta = train(qvecs, candidates, positive, chunks, tau, reg, steps)
        ADAPTER_PATH.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            ADAPTER_PATH,
            delta=delta.astype(np.float16),
            provenance=np.array(
                f"SciFact train split ({len(ids)} queries, CC BY-NC 2.0), all-MiniLM-L6-v2 chunk "
                f"vectors, tau={tau} reg={reg} steps={steps} (+{CANDIDATES} hard negatives), "
                f"5-fold CV hybrid nDCG@10 {ndcg:.4f} R@100 {rec:.4f} at dense_weight={weight[0]} "
                f"rrf_k={weight[1]} (no adapter: {baseline[0]:.4f})"
            ),
        )
        print(f"wrote {ADAPTER_PATH}")
    elif args.write:
        print("the adapter does not beat the identity on TRAIN CV: nothing written")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--data-dir",
        type=Path,
        help="An embedded database folder holding the SciFact corpus (bench/retrieval.py --data-dir DIR).",
    )
    where.add_argument(
        "--database-url", help="A running database holding the SciFact corpus (left running)."
    )
    parser.add_argument(
        "--write", action="store_true", help="Train on all TRAIN queries and write the adapter."
    )
    parser.add_argument("--quick", action="store_true", help="One grid point (the committed one).")
    args = parser.parse_args()
    args.grid = [(0.05, 0.1, 300)] if args.quick else GRID
    if args.database_url:
        asyncio.run(run(args, args.database_url))
        return
    with embedded_database(args.data_dir) as url:
        asyncio.run(run(args, url))


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
