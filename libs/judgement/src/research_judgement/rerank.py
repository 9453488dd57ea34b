"""Relevance rerank of a search's top hits by the trained cross-encoder.

`rerank_hits(query, hits, top)` reorders the first `top` hits and leaves the rest in place; each
reranked hit's `score` becomes the relevance probability of (query, title + abstract) (the models
load on first use, once per process). Two orders, measured side by side by `task bench:rerank`:

* `"fused"` (default): reciprocal-rank fusion of the search's own order and the cross-encoder's,
  `1/(K + rank_search) + 1/(K + rank_relevance)` with the customary K = 60, ties to the more
  relevant hit — the cross-encoder
  corrects the search without throwing away what the hybrid score knew;
* `"relevance"`: the cross-encoder's order alone.

It lives here, not in the corpus library, so the corpus never depends on the judgement models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from research_corpus.search import PaperHit
from research_judgement.judge import relevance

RRF_K = 60
Method = Literal["fused", "relevance"]


def rerank_hits(
    query: str, hits: Sequence[PaperHit], top: int, method: Method = "fused"
) -> list[PaperHit]:
    """`hits` with the first `top` reordered by relevance to `query` (see the module doc), best first."""
    hits = list(hits)
    if top <= 1 or len(hits) < 2:
        return hits
    head, tail = hits[:top], hits[top:]
    probs = relevance(query, [(h.title, h.abstract or h.passage) for h in head])
    by_relevance = sorted(range(len(head)), key=lambda i: -float(probs[i]))
    if method == "relevance":
        order = by_relevance
    else:
        rank = {i: r for r, i in enumerate(by_relevance)}
        # ties (a hit each ranker puts one place higher) go to the more relevant hit
        order = sorted(
            range(len(head)),
            key=lambda i: (-(1 / (RRF_K + i) + 1 / (RRF_K + rank[i])), -float(probs[i])),
        )
    return [head[i].model_copy(update={"score": float(probs[i])}) for i in order] + tail
