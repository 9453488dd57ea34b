"""Optional relevance rerank of a search's top hits by the trained cross-encoder.

`rerank_hits(query, hits, top)` reorders the first `top` hits by `research_judgement`'s relevance
probability of (query, title + abstract) and leaves the rest in place; each reranked hit's
`score` becomes that probability. The judgement library is imported on first use (it loads
torch and the adapter once per process); `search(..., rerank=20)` calls this.
Measured by `task bench:rerank` (docs/judgement.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from research_corpus.search import PaperHit


def rerank_hits(query: str, hits: Sequence[PaperHit], top: int) -> list[PaperHit]:
    """`hits` with the first `top` reordered by relevance to `query`, best first."""
    hits = list(hits)
    if top <= 1 or len(hits) < 2:
        return hits
    from research_judgement import relevance

    head, tail = hits[:top], hits[top:]
    probs = relevance(query, [(h.title, h.abstract or h.passage) for h in head])
    order = sorted(range(len(head)), key=lambda i: -float(probs[i]))
    return [head[i].model_copy(update={"score": float(probs[i])}) for i in order] + tail
