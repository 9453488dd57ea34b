"""IR metrics and reference numbers for bench/retrieval.py (binary/graded qrels as in BEIR)."""

from __future__ import annotations

import math

# Published nDCG@10 on the SciFact BEIR test split (../shared/README.md).
PUBLISHED = {
    "lexical": ("BM25 0.665", 0.665),
    "dense": ("MiniLM 0.645", 0.645),
    "hybrid": ("BM25+MiniLM 0.719", 0.719),
}
# Issue 15: hybrid past the anchors (this engine's hybrid before the query adapter, same split).
ANCHOR = {"ndcg@10": 0.7197, "recall@100": 0.9493}
TARGETS = {"ndcg@10": 0.74, "recall@100": 0.96, "p95_ms": 50.0, "batch_300_s": 10.0}


def ndcg_at(ranking: list[str], relevant: dict[str, int], k: int) -> float:
    """nDCG@k with linear gains (the trec_eval / BEIR definition)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranking: list[str], relevant: dict[str, int], k: int) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranking[:k])) / len(wanted) if wanted else 0.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
