"""Train (and cross-validate) the query adapter over MiniLM on the SciFact TRAIN split only.

The adapter is a 384×384 linear map W = I + D applied to a query's MiniLM vector before the
dense kNN (the corpus's chunk vectors are unchanged, so nothing is re-embedded). It is trained
with a softmax over every chunk of the corpus (the relevant papers' chunks are the positives,
all the others negatives), temperature `tau`, and an L2 pull of D towards 0 so the map stays
close to the identity. 5-fold cross-validation on TRAIN picks the settings; the final map is
trained on all TRAIN queries and written to `research_corpus/data/query_adapter.npz` with its
provenance. The test split is never read here.

SciFact (Wadden et al. 2020) is CC BY-NC 2.0: the adapter is derived from its train claims and
qrels (see research_corpus/data/ATTRIBUTION.md).

    .venv/bin/python bench/retrieval_adapter.py --data-dir /tmp/re-retrieval-db [--write]
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
from retrieval import DATA, load_split  # noqa: E402
from retrieval_metrics import ndcg_at, recall_at  # noqa: E402

GRID = [(tau, reg, steps) for tau in (0.05, 0.1) for reg in (0.01, 0.1, 1.0) for steps in (100, 300)]


async def load_corpus(sessions):  # noqa: ANN001, ANN201
    from sqlalchemy import text

    async with sessions() as session:
        rows = (await session.execute(text(
            "SELECT c.id, c.paper_id, p.external_id, c.embedding::text FROM corpus_chunks c "
            "JOIN corpus_papers p ON p.id = c.paper_id ORDER BY c.id"))).all()
    chunk_paper = np.array([r[1] for r in rows])
    names = {r[1]: r[2] for r in rows}
    vectors = np.array([np.array(r[3][1:-1].split(","), dtype=np.float32) for r in rows])
    return chunk_paper, names, vectors


def train(queries: np.ndarray, positives: list[np.ndarray], chunks: np.ndarray, tau: float, reg: float,
          steps: int, seed: int = 0) -> np.ndarray:
    """D (384×384) minimising −log Σ_pos softmax(cos(Wq, c)/tau) + reg·‖D‖² over the corpus."""
    import torch

    torch.manual_seed(seed)
    q = torch.tensor(queries)
    c = torch.tensor(chunks)
    mask = torch.zeros(len(queries), len(chunks), dtype=torch.bool)
    for i, pos in enumerate(positives):
        mask[i, torch.tensor(pos)] = True
    delta = torch.zeros(q.shape[1], q.shape[1], requires_grad=True)
    optimiser = torch.optim.Adam([delta], lr=1e-3)
    for _ in range(steps):
        adapted = torch.nn.functional.normalize(q + q @ delta, dim=1)
        logits = adapted @ c.T / tau
        log_norm = torch.logsumexp(logits, dim=1)
        log_pos = torch.logsumexp(logits.masked_fill(~mask, float("-inf")), dim=1)
        loss = (log_norm - log_pos).mean() + reg * (delta ** 2).sum()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return delta.detach().numpy()


def dense_papers(qvec: np.ndarray, chunks: np.ndarray, chunk_paper: np.ndarray, k: int = 200) -> list[int]:
    order = np.argsort(-(chunks @ qvec))
    seen: dict[int, None] = {}
    for idx in order:
        seen.setdefault(int(chunk_paper[idx]), None)
        if len(seen) >= k:
            break
    return list(seen)


def adapt(vectors: np.ndarray, delta: np.ndarray | None) -> np.ndarray:
    if delta is None:
        return vectors
    out = vectors + vectors @ delta
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def score(ids, vectors, chunks, chunk_paper, names, qrels) -> tuple[float, float]:  # noqa: ANN001
    ndcgs, recalls = [], []
    for qid, v in zip(ids, vectors, strict=True):
        ranking = [names[p] for p in dense_papers(v, chunks, chunk_paper, 100)]
        ndcgs.append(ndcg_at(ranking, qrels[qid], 10))
        recalls.append(recall_at(ranking, qrels[qid], 100))
    return statistics.fmean(ndcgs), statistics.fmean(recalls)


async def run(args: argparse.Namespace, url: str) -> None:
    from research_platform.db import create_engine, session_factory

    from research_corpus.embedding import get_embedder

    engine = create_engine(url)
    chunk_paper, names, chunks = await load_corpus(session_factory(engine))
    await engine.dispose()
    by_name = {}
    for idx, pid in enumerate(chunk_paper):
        by_name.setdefault(names[int(pid)], []).append(idx)
    queries, qrels = load_split(args.data, "train")
    ids = list(queries)
    qvecs = get_embedder().embed([queries[q] for q in ids])
    positives = [np.array([i for d, g in qrels[q].items() if g > 0 for i in by_name.get(d, [])]) for q in ids]
    keep = [i for i, p in enumerate(positives) if len(p)]
    ids, qvecs, positives = [ids[i] for i in keep], qvecs[keep], [positives[i] for i in keep]
    print(f"TRAIN: {len(ids)} queries, corpus {len(chunks)} chunks; no adapter: "
          "nDCG@10 %.4f R@100 %.4f" % score(ids, qvecs, chunks, chunk_paper, names, qrels))
    folds = np.arange(len(ids)) % 5
    results = []
    for tau, reg, steps in args.grid:
        fold_scores = []
        for f in range(5):
            tr, te = np.where(folds != f)[0], np.where(folds == f)[0]
            delta = train(qvecs[tr], [positives[i] for i in tr], chunks, tau, reg, steps)
            fold_scores.append(score([ids[i] for i in te], adapt(qvecs[te], delta), chunks, chunk_paper, names, qrels))
        ndcg, rec = statistics.fmean(s[0] for s in fold_scores), statistics.fmean(s[1] for s in fold_scores)
        results.append((ndcg, rec, tau, reg, steps))
        print(f"  tau={tau} reg={reg} steps={steps}: 5-fold CV dense nDCG@10 {ndcg:.4f} R@100 {rec:.4f}", flush=True)
    ndcg, rec, tau, reg, steps = max(results)
    print(f"best on TRAIN (CV): tau={tau} reg={reg} steps={steps} nDCG@10 {ndcg:.4f} R@100 {rec:.4f}")
    if args.write:
        from research_corpus.adapter import ADAPTER_PATH

        delta = train(qvecs, positives, chunks, tau, reg, steps)
        ADAPTER_PATH.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            ADAPTER_PATH, delta=delta.astype(np.float16),
            provenance=np.array(f"SciFact train split ({len(ids)} queries, CC BY-NC 2.0), all-MiniLM-L6-v2 chunk "
                                f"vectors, tau={tau} reg={reg} steps={steps}, 5-fold CV nDCG@10 {ndcg:.4f}"),
        )
        print(f"wrote {ADAPTER_PATH}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--data-dir", type=Path, required=True,
                        help="An embedded database folder holding the SciFact corpus (bench/retrieval.py --data-dir DIR).")
    parser.add_argument("--write", action="store_true", help="Train on all TRAIN queries and write the adapter.")
    parser.add_argument("--quick", action="store_true", help="One grid point (the committed one).")
    args = parser.parse_args()
    args.grid = [(0.05, 0.1, 300)] if args.quick else GRID

    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    pg = EmbeddedPostgres(args.data_dir).start()
    try:
        upgrade(pg.url)
        asyncio.run(run(args, pg.url))
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
