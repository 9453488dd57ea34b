"""Reproduce the offline passage classifier's weights from the SciFact TRAIN split only.

    .venv/bin/python scripts/train_verifier.py [--data /work/shared/data/scifact] [--cv-only]

Pairs: every sentence of every abstract a train claim cites, labelled with the claim's
rationale label (SUPPORT / CONTRADICT) or NEI for the other sentences; plus sentences drawn from
other claims' abstracts as easy NEI negatives; plus, because SciFact's contradictions were
written by negating supported claims, each rationale pair again with its claim negated and the
label flipped (`negate_claim`). Model selection and the abstract-level thresholds come from
5-fold cross-validation grouped by claim on train; the dev split is never read here.
Writes libs/verification/src/research_verification/weights/passage_classifier.npz.
Needs scikit-learn (`pip install -e 'libs/verification[train]'`; sentence-transformers brings it).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from research_verification.abstracts import abstract_label  # noqa: E402
from research_verification.classifier import LABELS, WEIGHTS, PassageClassifier, pair_features  # noqa: E402
from research_verification.scifact import cached_vectors, load_claims, load_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / "results"
SEED = 2020

SWAPS = [
    ("increases", "decreases"), ("increased", "decreased"), ("increase", "decrease"),
    ("higher", "lower"), ("raises", "lowers"), ("reduces", "increases"), ("reduced", "increased"),
    ("improves", "worsens"), ("promotes", "inhibits"), ("enhances", "impairs"), ("more", "less"),
    ("activates", "inhibits"), ("induces", "suppresses"), ("positive", "negative"), ("greater", "smaller"),
]
AUXILIARIES = [(" is ", " is not "), (" are ", " are not "), (" can ", " cannot "), (" does ", " does not "),
               (" has ", " does not have "), (" was ", " was not "), (" were ", " were not ")]


def negate_claim(claim: str) -> str | None:
    """The claim with its direction reversed or a negation inserted; None when neither applies."""
    for a, b in SWAPS:
        for x, y in ((a, b), (b, a)):
            pattern = re.compile(rf"\b{x}\b", re.IGNORECASE)
            if pattern.search(claim):
                return pattern.sub(y, claim, count=1)
    for x, y in AUXILIARIES:
        if x in claim:
            return claim.replace(x, y, 1)
    for x in (" not ", " no "):
        if x in claim:
            return claim.replace(x, " ", 1)
    return None


def embed_cached(texts: list[str]) -> dict[str, np.ndarray]:
    """MiniLM vectors by text, shared with the other verification scripts via bench/results."""
    from research_corpus.embedding import get_embedder

    return cached_vectors(texts, CACHE, get_embedder().embed)


def build_pairs(claims, corpus, augment: bool, rng: random.Random):
    """Rows (claim index, claim text, sentence, label, abstract key or None) for `claims`.

    The abstract key (claim index, doc id) marks rows of a cited abstract, which are also the
    rows cross-validation scores; augmented and random-negative rows only ever train.
    """
    rows = []
    doc_pool = sorted({d for c in claims for d in c.cited_doc_ids if d in corpus})
    for k, c in enumerate(claims):
        for doc in c.cited_doc_ids:
            for i, sentence in enumerate(corpus[doc].sentences):
                label = c.sentence_label(doc, i)
                rows.append((k, c.claim, sentence, label, (k, doc)))
                if augment and label != "NEI" and (flipped := negate_claim(c.claim)):
                    rows.append((k, flipped, sentence, "CONTRADICT" if label == "SUPPORT" else "SUPPORT", None))
        others = [d for d in rng.sample(doc_pool, 3) if d not in c.cited_doc_ids][:2]
        for doc in others:
            for sentence in rng.sample(corpus[doc].sentences, min(2, len(corpus[doc].sentences))):
                rows.append((k, c.claim, sentence, "NEI", None))
    return rows


def featurize(rows, vectors) -> tuple[np.ndarray, np.ndarray]:
    x = np.vstack([pair_features(vectors[c], vectors[s][None, :], c, [s]) for _, c, s, _, _ in rows])
    y = np.asarray([LABELS.index(label) for *_, label, _ in rows])
    return x, y


def fit(x, y, hidden: int, alpha: float) -> PassageClassifier:
    """Softmax regression (hidden 0, C = alpha) or a one-hidden-layer MLP (L2 = alpha)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    if hidden == 0:
        model = LogisticRegression(C=alpha, max_iter=300, class_weight="balanced")
        model.fit(z, y)
        layers = [(model.coef_.T.copy(), model.intercept_.copy())]
    else:
        # MLPClassifier takes no class weights: oversample the rare labels to about NEI's count.
        counts = np.bincount(y, minlength=3)
        reps = np.minimum(8, np.maximum(1, np.round(counts.max() / np.maximum(counts, 1)).astype(int)))
        idx = np.concatenate([np.repeat(np.flatnonzero(y == k), reps[k]) for k in range(3)])
        model = MLPClassifier((hidden,), alpha=alpha, max_iter=40, early_stopping=True, random_state=SEED)
        model.fit(z[idx], y[idx])
        layers = list(zip(model.coefs_, model.intercepts_, strict=True))
    return PassageClassifier(mean.astype(np.float32), scale.astype(np.float32), layers)


def macro_f1(gold: list[str], pred: list[str]) -> tuple[float, dict[str, float]]:
    per = {}
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, pred, strict=True))
        fp = sum(p == label != g for g, p in zip(gold, pred, strict=True))
        fn = sum(g == label != p for g, p in zip(gold, pred, strict=True))
        per[label] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return sum(per.values()) / 3, per


def tune_thresholds(abstract_probs, gold) -> tuple[dict[str, float], float]:
    """Grid search of the abstract rule's constants on out-of-fold predictions."""
    best, best_f1 = {}, -1.0
    for rationale, top_k, cw in itertools.product(
        (0.3, 0.4, 0.5, 0.6, 0.7, 0.8), (1, 2, 3, 5), (0.8, 1.0, 1.25, 1.5, 2.0)
    ):
        t = {"rationale": rationale, "top_k": float(top_k), "contradict_weight": cw}
        f1, _ = macro_f1(gold, [abstract_label(p, t).label for p in abstract_probs])
        if f1 > best_f1:
            best, best_f1 = t, f1
    return best, best_f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--configs", default="0:0.05,64:1.0,128:3.0", help="hidden:alpha (hidden 0 = logistic C)")
    parser.add_argument("--no-augment", action="store_true")
    parser.add_argument("--cv-only", action="store_true", help="report cross-validation, write nothing")
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    args = parser.parse_args()
    rng = random.Random(SEED)
    claims = load_claims(args.data / "claims_train.jsonl")  # the train split and nothing else
    corpus = load_corpus(args.data / "corpus.jsonl")
    augment = not args.no_augment

    texts = [c.claim for c in claims] + [s for c in claims for d in c.cited_doc_ids for s in corpus[d].sentences]
    texts += [f for c in claims if (f := negate_claim(c.claim))]
    vectors = embed_cached(texts)

    rows = build_pairs(claims, corpus, augment, rng)
    x, y = featurize(rows, vectors)
    fold_of = np.asarray([k % 5 for k, *_ in rows])
    abstract_of = [key for *_, key in rows]
    configs = [(int(h), float(a)) for h, a in (c.split(":") for c in args.configs.split(","))]
    scores = {}
    for hidden, alpha in configs:
        t0 = time.perf_counter()
        abstract_probs, gold = [], []
        for k in range(5):
            model = fit(x[fold_of != k], y[fold_of != k], hidden, alpha)
            held = [i for i in np.flatnonzero(fold_of == k) if abstract_of[i] is not None]
            probs = model.predict_features(x[held])
            by_abstract: dict[tuple[int, int], list[int]] = {}
            for j, i in enumerate(held):
                by_abstract.setdefault(abstract_of[i], []).append(j)
            for (claim_index, doc), members in by_abstract.items():
                abstract_probs.append(probs[members])
                gold.append(claims[claim_index].gold_label(doc))
        thresholds, f1 = tune_thresholds(abstract_probs, gold)
        _, per = macro_f1(gold, [abstract_label(p, thresholds).label for p in abstract_probs])
        scores[(hidden, alpha)] = (f1, thresholds)
        print(f"cv hidden={hidden} alpha={alpha} macro_f1={f1:.3f} "
              + " ".join(f"{k}={v:.3f}" for k, v in per.items())
              + f" thresholds={thresholds} ({time.perf_counter() - t0:.0f}s)", flush=True)
    (hidden, alpha), (f1, thresholds) = max(scores.items(), key=lambda kv: kv[1][0])
    print(f"chosen hidden={hidden} alpha={alpha} cv_macro_f1={f1:.3f}")
    if args.cv_only:
        return
    model = fit(x, y, hidden, alpha)
    model.thresholds = thresholds
    model.save(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
