"""The optional relevance rerank of search hits (research_judgement.rerank) with the shipped model."""

from __future__ import annotations

import pytest

from research_corpus.search import PaperHit
from research_judgement.rerank import rerank_hits

pytestmark = pytest.mark.unit

QUESTION = "Does exercise training improve quality of life in patients with chronic heart failure?"


def hit(n: int, title: str, abstract: str) -> PaperHit:
    return PaperHit(
        paper_id=n,
        external_id=str(n),
        title=title,
        score=1.0 / n,
        passage=abstract,
        locator="abstract",
        abstract=abstract,
    )


def test_the_on_topic_trial_moves_to_the_top_and_the_tail_stays():
    hits = [
        hit(
            1,
            "Plate tectonics of the early Earth",
            "Subduction began about three billion years ago, as zircon records show.",
        ),
        hit(
            2,
            "Effects of exercise training on health status in patients with chronic heart failure: HF-ACTION randomized controlled trial.",
            "Exercise training conferred modest but statistically significant improvements in self-reported health status "
            "compared with usual care without training.",
        ),
        hit(3, "A survey of medieval bookbinding", "Leather covers were tanned with oak bark."),
    ]
    reranked = rerank_hits(QUESTION, hits, 2)
    assert [h.paper_id for h in reranked] == [2, 1, 3]
    assert reranked[0].score > reranked[1].score and reranked[2] == hits[2]
    assert rerank_hits(QUESTION, hits, 0) == hits  # off: unchanged


def test_fused_order_keeps_what_the_search_knew(monkeypatch):
    import numpy as np

    from research_judgement import rerank

    hits = [hit(n, f"paper {n}", f"abstract {n}") for n in range(1, 6)]
    # the cross-encoder puts the search's fifth hit first and its first hit last
    monkeypatch.setattr(
        rerank, "relevance", lambda q, passages: np.array([0.1, 0.6, 0.5, 0.4, 0.9])
    )
    fused = [h.paper_id for h in rerank_hits(QUESTION, hits, 5)]
    alone = [h.paper_id for h in rerank_hits(QUESTION, hits, 5, method="relevance")]
    assert alone == [5, 2, 3, 4, 1]
    # RRF (K=60): hit 2 (2nd in both) leads; hit 1 (search 1st, relevance last) and hit 5 (search
    # last, relevance 1st) tie, the more relevant first; both pass hit 3 (3rd in both)
    assert fused == [2, 5, 1, 3, 4]
