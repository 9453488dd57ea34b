"""The abstracts the engine's own search puts in front of each SciFact claim, over the full corpus.

The abstract-level evidence model is trained on — and cross-validated against — the papers a
user's request really meets: the hybrid search (BM25 + MiniLM, `research_corpus.search`) over all
5,183 abstracts, top `--k` per claim, the claim itself as the query. For every train and dev claim
this writes one JSON line `{"split", "id", "claim", "hits": [[doc_id, score], …]}` to
`--out` (default `<data dir>/candidates.jsonl`), which `scripts/train_abstract.py` and
`bench/verify.py` read. The corpus comes from `bench/full_corpus.py`'s cached folder.

    .venv/bin/python scripts/abstract_candidates.py [--data-dir DIR] [--k 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from full_corpus import DATA, corpus_dir, ensure_ingested


async def candidates(database_url: str, claims: list[tuple[str, dict]], k: int) -> list[dict]:
    from research_corpus.search import search_many
    from research_platform.db import create_engine, session_factory

    engine = create_engine(database_url)
    sessions = session_factory(engine)
    out = []
    try:
        for start in range(0, len(claims), 64):
            batch = claims[start : start + 64]
            hits = await search_many(sessions, [c["claim"] for _, c in batch], k=k)
            for (split, claim), found in zip(batch, hits, strict=True):
                out.append(
                    {
                        "split": split,
                        "id": claim["id"],
                        "claim": claim["claim"],
                        "hits": [[int(h.external_id), round(float(h.score), 6)] for h in found],
                    }
                )
            print(f"searched {len(out)}/{len(claims)} claims", flush=True)
    finally:
        await engine.dispose()
    return out


def main() -> None:
    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    folder = corpus_dir(args.data_dir)
    claims = [
        (split, json.loads(line))
        for split in ("train", "dev")
        for line in (DATA / f"claims_{split}.jsonl").open()
        if line.strip()
    ]
    pg = EmbeddedPostgres(folder).start()
    try:
        upgrade(pg.url)
        ensure_ingested(pg.url)
        started = time.perf_counter()
        rows = asyncio.run(candidates(pg.url, claims, args.k))
    finally:
        pg.stop()
    out = args.out or folder / "candidates.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recall = [
        any(str(d) in c["evidence"] for d, _ in r["hits"])
        for (_, c), r in zip(claims, rows, strict=True)
        if c.get("evidence")
    ]
    print(
        f"{len(rows)} claims in {time.perf_counter() - started:.0f} s; an evidence abstract in the top {args.k} for "
        f"{sum(recall) / len(recall):.3f} of {len(recall)} claims with evidence; wrote {out}"
    )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
