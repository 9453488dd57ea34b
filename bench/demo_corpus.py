"""Rebuild the bundled demo corpus (src/research_engine/demo_data/scifact_demo.jsonl).

An excerpt of SciFact (Wadden et al. 2020, CC BY-NC 2.0): the gold evidence abstracts and
cited abstracts of 45 TRAIN claims with evidence (sampled with seed 2020), plus random
distractor abstracts (seed 2020) up to 360 lines, in corpus order, unchanged.

    .venv/bin/python bench/demo_corpus.py [../shared/data/scifact]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "src/research_engine/demo_data/scifact_demo.jsonl"
SEED, CLAIMS, TOTAL = 2020, 45, 360


def main() -> None:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared/data/scifact"
    if not data.exists():
        sys.exit(f"{data} is not present: the SciFact data is needed to rebuild the excerpt")
    claims = [json.loads(line) for line in (data / "claims_train.jsonl").open()]
    with_evidence = [c for c in claims if c["evidence"]]
    rng = random.Random(SEED)
    picked = sorted(rng.sample(with_evidence, CLAIMS), key=lambda c: c["id"])
    wanted = {int(d) for c in picked for d in c["evidence"]} | {
        int(d) for c in picked for d in c["cited_doc_ids"]
    }
    corpus_lines = (data / "corpus.jsonl").read_text().splitlines()
    ids = [json.loads(line)["doc_id"] for line in corpus_lines]
    others = [d for d in ids if d not in wanted]
    wanted |= set(rng.sample(others, TOTAL - len(wanted)))
    kept = [line for line, doc in zip(corpus_lines, ids, strict=True) if doc in wanted]
    OUT.write_text("\n".join(kept) + "\n")
    print(f"{len(kept)} abstracts ({CLAIMS} train claims: {[c['id'] for c in picked]}) -> {OUT}")


if __name__ == "__main__":
    main()
