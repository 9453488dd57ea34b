"""Pure ranking logic: chunk rankings → paper rankings, and reciprocal rank fusion.

Kept free of I/O so fusion order can be checked by hand in unit tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from research_platform.settings import CorpusSettings


@dataclass(frozen=True)
class ChunkHit:
    """A chunk as one ranking returned it."""

    chunk_id: int
    paper_id: int
    score: float


@dataclass
class Ranked:
    """A paper's place after ranking: its score, best chunk, and rank in each input ranking."""

    paper_id: int
    chunk_id: int
    score: float
    lexical_rank: int | None = None
    dense_rank: int | None = None


def paper_ranks(chunks: list[ChunkHit]) -> dict[int, tuple[int, ChunkHit]]:
    """Each paper's 1-based rank (by its best chunk) and that chunk; `chunks` is best first."""
    ranks: dict[int, tuple[int, ChunkHit]] = {}
    for hit in chunks:
        if hit.paper_id not in ranks:
            ranks[hit.paper_id] = (len(ranks) + 1, hit)
    return ranks


def rank_papers(chunks: list[ChunkHit], limit: int, source: str) -> list[Ranked]:
    """One ranking aggregated to papers: a paper's score is its best chunk's score."""
    ranked = []
    for paper_id, (rank, hit) in paper_ranks(chunks).items():
        item = Ranked(paper_id, hit.chunk_id, hit.score)
        setattr(item, f"{source}_rank", rank)
        ranked.append(item)
    return ranked[:limit]


def fuse(
    lexical: list[ChunkHit], dense: list[ChunkHit], settings: CorpusSettings, limit: int
) -> list[Ranked]:
    """Weighted reciprocal rank fusion of two chunk rankings, at paper level.

    A paper absent from one ranking gets nothing from it. Ties break by paper id so results
    are deterministic. The paper's passage is its chunk with the best fused chunk-level score.
    """
    k = settings.rrf_k
    lex_papers, dense_papers = paper_ranks(lexical), paper_ranks(dense)
    chunk_scores: dict[int, float] = {}
    chunk_paper: dict[int, int] = {}
    for weight, chunks in ((settings.lexical_weight, lexical), (settings.dense_weight, dense)):
        for rank, hit in enumerate(chunks, start=1):
            chunk_scores[hit.chunk_id] = chunk_scores.get(hit.chunk_id, 0.0) + weight / (k + rank)
            chunk_paper[hit.chunk_id] = hit.paper_id
    best_chunk: dict[int, int] = {}
    for chunk_id, score in chunk_scores.items():
        paper = chunk_paper[chunk_id]
        if paper not in best_chunk or score > chunk_scores[best_chunk[paper]]:
            best_chunk[paper] = chunk_id
    ranked = []
    for paper_id in lex_papers.keys() | dense_papers.keys():
        lex_rank = lex_papers[paper_id][0] if paper_id in lex_papers else None
        dense_rank = dense_papers[paper_id][0] if paper_id in dense_papers else None
        score = (settings.lexical_weight / (k + lex_rank) if lex_rank else 0.0) + (
            settings.dense_weight / (k + dense_rank) if dense_rank else 0.0
        )
        ranked.append(Ranked(paper_id, best_chunk[paper_id], score, lex_rank, dense_rank))
    ranked.sort(key=lambda r: (-r.score, r.paper_id))
    return ranked[:limit]
