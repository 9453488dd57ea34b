"""Grid search of the retrieval settings on the SciFact TRAIN split (never the test split).

BM25 settings (title weight, k1, b) are searched on the lexical ranking; then, with the best
of them, the fusion settings (rrf_k, dense weight relative to lexical) and the number of
candidates per ranking are searched on cached chunk rankings, so each query is run only once
per BM25 setting. Prints the best settings as environment variables (CORPUS__…).
"""

from __future__ import annotations

import itertools
import statistics

from retrieval_metrics import ndcg_at, recall_at
from sqlalchemy import text


async def _external_ids(sessions) -> dict[int, str]:
    async with sessions() as session:
        return dict(
            (await session.execute(text("SELECT id, external_id FROM corpus_papers"))).all()
        )


def _score(ranked_lists, qrels, names) -> tuple[float, float]:
    ndcg = statistics.fmean(
        ndcg_at([names[r.paper_id] for r in ranked], qrels[q], 10) for q, ranked in ranked_lists
    )
    rec = statistics.fmean(
        recall_at([names[r.paper_id] for r in ranked], qrels[q], 100) for q, ranked in ranked_lists
    )
    return ndcg, rec


LEXICAL_GRID = list(itertools.product((1.0, 2.0), ((0.9, 0.4), (1.2, 0.75), (1.5, 0.75))))
FUSION_GRID = list(
    itertools.product(
        (1, 2, 3, 5, 10, 20, 40, 60, 100), (0.5, 0.75, 1.0, 1.25, 1.5, 2.0), (100, 200, 300)
    )
)


async def tune(
    sessions,
    queries: dict[str, str],
    qrels,
    base,
    lexical_grid=LEXICAL_GRID,
    fusion_grid=FUSION_GRID,
) -> None:
    from research_corpus.embedding import get_embedder
    from research_corpus.ranking import fuse, rank_papers
    from research_corpus.search import SearchFilters, dense_chunks, lexical_chunks

    names = await _external_ids(sessions)
    filters = SearchFilters()
    limit = 300 * 3
    print(f"tuning on {len(queries)} TRAIN queries")

    lexical_runs = {}
    for title_weight, (k1, b) in lexical_grid:
        settings = base.model_copy(
            update={"title_weight": title_weight, "bm25_k1": k1, "bm25_b": b}
        )
        runs = []
        for qid, query in queries.items():
            async with sessions() as session, session.begin():
                runs.append((qid, await lexical_chunks(session, query, limit, filters, settings)))
        ndcg, rec = _score([(q, rank_papers(c, 100, "lexical")) for q, c in runs], qrels, names)
        lexical_runs[(title_weight, k1, b)] = (ndcg, runs)
        print(
            f"  lexical title_weight={title_weight} k1={k1} b={b}: nDCG@10 {ndcg:.4f}  R@100 {rec:.4f}"
        )
    best_lex = max(lexical_runs, key=lambda key: lexical_runs[key][0])
    lex_runs = dict(lexical_runs[best_lex][1])
    print(f"best BM25: title_weight={best_lex[0]} k1={best_lex[1]} b={best_lex[2]}")

    embedder = get_embedder()
    vectors = embedder.embed(list(queries.values()))
    dense_runs = {}
    for (qid, _), vector in zip(queries.items(), vectors, strict=True):
        async with sessions() as session, session.begin():
            dense_runs[qid] = await dense_chunks(session, vector.tolist(), limit, filters)
    ndcg, rec = _score(
        [(q, rank_papers(c, 100, "dense")) for q, c in dense_runs.items()], qrels, names
    )
    print(f"  dense: nDCG@10 {ndcg:.4f}  R@100 {rec:.4f}")

    results = []
    for rrf_k, dense_weight, candidates in fusion_grid:
        settings = base.model_copy(
            update={"rrf_k": rrf_k, "lexical_weight": 1.0, "dense_weight": dense_weight}
        )
        chunk_cut = candidates * 3
        fused = [
            (q, fuse(lex_runs[q][:chunk_cut], dense_runs[q][:chunk_cut], settings, candidates))
            for q in queries
        ]
        results.append((*_score(fused, qrels, names), rrf_k, dense_weight, candidates))
    results.sort(reverse=True)
    for ndcg, rec, rrf_k, dense_weight, candidates in results[:8]:
        print(
            f"  hybrid rrf_k={rrf_k} dense_weight={dense_weight} candidates={candidates}: nDCG@10 {ndcg:.4f}  R@100 {rec:.4f}"
        )
    ndcg, rec, rrf_k, dense_weight, candidates = results[0]
    print(
        f"\nbest on TRAIN: CORPUS__RRF_K={rrf_k} CORPUS__DENSE_WEIGHT={dense_weight} CORPUS__LEXICAL_WEIGHT=1.0 "
        f"CORPUS__CANDIDATES={candidates} CORPUS__TITLE_WEIGHT={best_lex[0]} CORPUS__BM25_K1={best_lex[1]} "
        f"CORPUS__BM25_B={best_lex[2]}  (nDCG@10 {ndcg:.4f}, R@100 {rec:.4f})"
    )
