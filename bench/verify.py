"""Offline verifier quality on SciFact: abstract-level label prediction with the cited abstracts.

For every claim of the split and every abstract it cites, the shipped passage classifier labels
each sentence, `abstract_label` turns those into SUPPORT / CONTRADICT / NEI for the abstract, and
the gold label is SciFact's (an evidence abstract's label, NEI for any other cited abstract).
Printed: 3-class macro-F1 and per-class F1, the confusion matrix, SciFact's own abstract-level
label-only F1 (precision/recall over SUPPORT/CONTRADICT predictions, the number papers report),
and the distribution of verdicts (`decide_verdict` over all cited abstracts' passages) per
claim-level gold label. Tune on train (the default); run dev once, for the final number.

    .venv/bin/python bench/verify.py [--split train|dev]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from research_verification import (  # noqa: E402
    LABELS,
    SentencePrediction,
    Verdict,
    abstract_label,
    decide_verdict,
    get_classifier,
    label_passages,
)
from research_verification.scifact import cached_vectors, load_claims, load_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
CACHE = REPO / "bench" / "results"
ANCHORS = (
    "VeriSci — Wadden et al. 2020, 'Fact or Fiction: Verifying Scientific Claims', EMNLP 2020: "
    "abstract-level label-only F1 (SciFact test, RoBERTa-large pipeline).",
    "MultiVerS — Wadden et al. 2022, 'MultiVerS: Improving scientific claim verification with weak "
    "supervision and full-document context', Findings of NAACL 2022: abstract-level label-only F1.",
)


def embed_cached(texts: list[str]) -> dict[str, np.ndarray]:
    """MiniLM vectors by text, shared with the other verification scripts via bench/results."""
    from research_corpus.embedding import get_embedder

    return cached_vectors(texts, CACHE, get_embedder().embed)


def f1_scores(gold: list[str], pred: list[str]) -> dict[str, float]:
    out = {}
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, pred, strict=True))
        fp = sum(p == label != g for g, p in zip(gold, pred, strict=True))
        fn = sum(g == label != p for g, p in zip(gold, pred, strict=True))
        out[label] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def scifact_label_only_f1(gold: list[str], pred: list[str]) -> tuple[float, float, float]:
    """SciFact's abstract-level label-only metric with oracle (cited) abstracts: P, R, F1."""
    correct = sum(g == p != "NEI" for g, p in zip(gold, pred, strict=True))
    predicted = sum(p != "NEI" for p in pred)
    relevant = sum(g != "NEI" for g in gold)
    precision = correct / predicted if predicted else 0.0
    recall = correct / relevant if relevant else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("train", "dev"), default="train")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    claims = load_claims(args.data / f"claims_{args.split}.jsonl")
    corpus = load_corpus(args.data / "corpus.jsonl")
    classifier = get_classifier()

    t0 = time.perf_counter()
    vectors = embed_cached([c.claim for c in claims] + [s for c in claims for d in c.cited_doc_ids for s in corpus[d].sentences])
    t_embed = time.perf_counter() - t0
    gold, pred, verdicts = [], [], Counter()
    n_sentences, t_classify = 0, 0.0
    for c in claims:
        passages = []
        for doc in c.cited_doc_ids:
            sentences = list(corpus[doc].sentences)
            t1 = time.perf_counter()
            probs = classifier.predict_vectors(vectors[c.claim], np.stack([vectors[s] for s in sentences]), c.claim, sentences)
            t_classify += time.perf_counter() - t1
            n_sentences += len(sentences)
            gold.append(c.gold_label(doc))
            pred.append(abstract_label(probs, classifier.thresholds).label)
            predictions = [
                SentencePrediction(s, LABELS[int(np.argmax(p))], float(p[0]), float(p[1]), float(p[2]))
                for s, p in zip(sentences, probs, strict=True)
            ]
            passages += label_passages(predictions, str(doc))
        claim_gold = next((c.gold_label(d) for d in c.cited_doc_ids if c.gold_label(d) != "NEI"), "NEI")
        verdicts[(claim_gold, decide_verdict(passages).verdict)] += 1

    per = f1_scores(gold, pred)
    macro = sum(per.values()) / 3
    precision, recall, label_only = scifact_label_only_f1(gold, pred)
    print(f"SciFact {args.split}: {len(claims)} claims, {len(gold)} cited abstracts, {n_sentences} sentences "
          f"(embedding {t_embed:.1f}s incl. cache, classifying {1e3 * t_classify / max(n_sentences, 1):.3f} ms/sentence)")
    print(f"thresholds (tuned by 5-fold CV on train): {classifier.thresholds}")
    if args.split == "train":
        print("note: the shipped weights were fit on all of train, so train numbers are in-sample; the honest "
              "train estimate is the 5-fold cross-validation printed by scripts/train_verifier.py")
    print("confusion (rows gold, columns predicted):  " + "  ".join(f"{p:>10}" for p in LABELS))
    for g in LABELS:
        print(f"  {g:>10}" + "".join(f"  {sum(1 for a, b in zip(gold, pred, strict=True) if a == g and b == p):>10}" for p in LABELS))
    print(f"3-class macro-F1 {macro:.3f}  " + "  ".join(f"F1[{k}] {v:.3f}" for k, v in per.items()))
    print(f"SciFact abstract-level label-only (oracle cited abstracts): P {precision:.3f} R {recall:.3f} F1 {label_only:.3f}")
    print("verdicts by claim-level gold label:")
    for g in LABELS:
        row = {v: verdicts[(g, v)] for v in Verdict if verdicts[(g, v)]}
        print(f"  {g:>10}: " + ", ".join(f"{v} {n}" for v, n in row.items()))
    print("published anchors (compare with the label-only F1 line, not with the 3-class macro-F1):")
    for anchor in ANCHORS:
        print(f"  {anchor} Numbers not verified here: the search tool found the papers but not their result tables.")
    print(f"bench:verify split={args.split} macro_f1={macro:.3f} f1_support={per['SUPPORT']:.3f} "
          f"f1_contradict={per['CONTRADICT']:.3f} f1_nei={per['NEI']:.3f} claims={len(claims)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
