"""Optional relevance rerank of a search's top hits by the trained cross-encoder.

`rerank_hits(query, hits, top)` reorders the first `top` hits by `research_judgement`'s relevance
probability of (query, title + abstract) and leaves the rest in place; each reranked hit's
`score` becomes that probability (the models load on first use, once per process). Off the
default search path; measured by `task bench:rerank` (docs/judgement.md). It lives here, not in
the corpus library, so the corpus never depends on the judgement models.
"""

from __future__ import annotations

from collections.abc import Sequence

from research_corpus.search import PaperHit
from research_judgement.judge import relevance


def rerank_hits(query: str, hits: Sequence[PaperHit], top: int) -> list[PaperHit]:
    """`hits` with the first `top` reordered by relevance to `query`, best first."""
    hits = list(hits)
    if top <= 1 or len(hits) < 2:
        return hits
    head, tail = hits[:top], hits[top:]
    probs = relevance(query, [(h.title, h.abstract or h.passage) for h in head])
    order = sorted(range(len(head)), key=lambda i: -float(probs[i]))
    return [head[i].model_copy(update={"score": float(probs[i])}) for i in order] + tail
