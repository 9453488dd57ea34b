"""Latency and throughput of the judgement cross-encoders (pairs/s at batch 1, 8 and 32).

Scores 128 real pairs per model — SciFact train claims × sentences of their cited abstracts
(evidence / stance share one model, `pair`) and claims × title + abstract (`relevance`) — through
`scorer.CrossEncoder.logits` with the cache bypassed, after one warm-up batch. Threads: torch's
default, or JUDGEMENT_THREADS. Prints the machine's load average beside the figures: the two
cores are shared, so numbers from a busy machine are lower bounds.

    .venv/bin/python bench/judgement.py [--pairs 128]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from research_judgement import get_judge, passage_text
from research_judgement.scifact import abstract_text, load_claims, load_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
BATCHES = (1, 8, 32)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--pairs", type=int, default=128)
    args = parser.parse_args()
    import torch

    if "JUDGEMENT_THREADS" in os.environ:
        torch.set_num_threads(int(os.environ["JUDGEMENT_THREADS"]))
    claims = load_claims(args.data / "claims_train.jsonl")
    corpus = load_corpus(args.data / "corpus.jsonl")
    pair = [
        (c.claim, passage_text(s, corpus[d].title))
        for c in claims
        for d in c.cited_doc_ids
        for s in corpus[d].sentences
    ][: args.pairs]
    rel = [
        (c.claim, abstract_text(corpus[d].title, corpus[d].sentences))
        for c in claims
        for d in c.cited_doc_ids
    ][: args.pairs]
    judge = get_judge()
    results = {}
    for name, pairs in (("pair", pair), ("relevance", rel)):
        model = judge.model(name)
        model.logits(pairs[:8], 8)  # warm-up
        for b in BATCHES:
            started = time.perf_counter()
            model.logits(pairs, b)
            seconds = time.perf_counter() - started
            results[(name, b)] = (len(pairs) / seconds, 1e3 * seconds / (len(pairs) / b))
            print(
                f"{name:10} batch {b:3}: {results[(name, b)][0]:7.1f} pairs/s, {results[(name, b)][1]:8.1f} ms per batch",
                flush=True,
            )
    load = os.getloadavg()[0]
    print(
        f"threads {torch.get_num_threads()}, load average {load:.1f} on {os.cpu_count()} cores; evidence and stance are "
        "one forward pass of the pair model (the figures for `pair` hold for both)"
    )
    print_summary(
        "bench:judgement "
        + " ".join(
            f"{name}_b{b}={results[(name, b)][0]:.1f}"
            for name in ("pair", "relevance")
            for b in BATCHES
        )
        + f" unit=pairs_per_s load={load:.1f}"
    )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
