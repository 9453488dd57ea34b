"""Offline verifier quality on SciFact: abstract-level labels and rationale sentences of cited abstracts.

For every claim of the split and every abstract it cites, the shipped judgement model
(`research_judgement`, claim × "title: sentence" cross-encoder) gives each sentence calibrated
SUPPORT / CONTRADICT / NEI probabilities; the abstract rule (`abstract_decision`, thresholds tuned
on train cross-validation) turns them into a label and rationale sentences. Gold: SciFact's
(an evidence abstract's label and rationale sets, NEI for any other cited abstract). Printed:
3-class macro-F1 and per-class F1, the confusion matrix, SciFact's sentence-level rationale
selection F1, abstract-level label-only and label + rationale F1, the sentence-level expected
calibration error, the verdicts `decide_verdict` gives per claim-level gold label, and anchors.

`--split train` (default) prints the cross-validation figures stored with the shipped model by
`scripts/train_judgement.py` (scoring train again would be partly in-sample); `--split dev`
scores dev (150 claims) — once per shipped model.

    .venv/bin/python bench/verify.py [--split train|dev]
    .venv/bin/python bench/verify.py --model abstract     # the abstract-level model alone, train fold 0, full-corpus candidates
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

import numpy as np

from research_judgement import LABELS, get_judge
from research_judgement.metrics import (
    ScoredAbstract,
    abstract_decision,
    ece,
    f1_per_label,
    label_only_f1,
    label_rationale_f1,
    rationale_f1,
)
from research_judgement.scifact import load_claims, load_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
ANCHORS = (
    (
        "feature classifier (frozen MiniLM vectors + lexical cues; replaced by the judgement models in issue 25): "
        "dev macro-F1 0.558, F1[CONTRADICT] 0.400, rationale F1 0.565 through this bench"
    ),
    (
        "MultiVerS (Wadden et al. 2022, Findings of NAACL, arXiv:2112.01640, Longformer-large): SciFact macro-F1 0.725 "
        "as listed by wizwand.com (hidden test set, not this split; source and caveat in docs/judgement.md)"
    ),
)


def line(split: str, macro: float, per: dict, rat: float, cal: float, claims: int) -> str:
    return (
        f"bench:verify split={split} macro_f1={macro:.3f} f1_support={per['SUPPORT']:.3f} "
        f"f1_contradict={per['CONTRADICT']:.3f} f1_nei={per['NEI']:.3f} rationale_f1={rat:.3f} "
        f"ece={cal:.3f} claims={claims}"
    )


def train_cv(judge) -> None:
    cv = judge.config.get("cv", {}).get("pair", {})
    training = judge.config.get("training", {})
    if "all" not in cv:
        sys.exit(
            "the shipped judgement.json holds no cross-validation results: run scripts/train_judgement.py"
        )
    print(
        f"SciFact train, cross-validation grouped by claim ({training.get('folds_run', '?')} of 5 folds, "
        "out-of-fold predictions; numbers written by scripts/train_judgement.py with the shipped model)"
    )
    for name, r in cv.items():
        print(
            f"  {name:>10}: macro-F1 {r['macro_f1']:.3f}  "
            + "  ".join(f"F1[{k}] {v:.3f}" for k, v in r["f1"].items())
            + f"  rationale F1 {r['rationale_f1']:.3f}  label+rationale F1 {r['label_rationale_f1']:.3f}"
            f"  label-only F1 {r['label_only_f1']:.3f}  ECE {r['ece_raw']:.3f} -> {r['ece']:.3f} (T={r['temperature']:.2f})"
        )
    rel = judge.config.get("cv", {}).get("relevance")
    if rel:
        print(
            f"  relevance: accuracy {rel['accuracy']:.3f}, ECE {rel['ece_raw']:.3f} -> {rel['ece']:.3f} (Platt) on {rel['rows']} held-out pairs"
        )
    r = cv["all"]
    held = (809 * training.get("folds_run", 1) + 4) // 5
    print(
        line("train-cv", r["macro_f1"], r["f1"], r["rationale_f1"], r["ece"], held)
        + " model=judgement"
    )


def abstract_model(data: Path, candidates: Path, k: int) -> None:
    """The shipped abstract-level model alone on train fold 0 (the fold it was not trained on; its
    thresholds were tuned there): each held-out claim against the top `k` hits of the engine's hybrid
    search over the full corpus (`scripts/abstract_candidates.py`), through `judge_abstracts`."""
    from research_judgement.abstract import get_abstract_judge
    from research_verification import judge_abstracts

    if not candidates.exists():
        sys.exit(
            f"{candidates} is absent: run scripts/abstract_candidates.py (the full corpus's search candidates)"
        )
    hits = {}
    for raw in candidates.read_text().splitlines():
        row = __import__("json").loads(raw)
        if row["split"] == "train":
            hits[int(row["id"])] = [int(d) for d, _ in row["hits"][:k]]
    claims = [c for i, c in enumerate(load_claims(data / "claims_train.jsonl")) if i % 5 == 0]
    corpus = load_corpus(data / "corpus.jsonl")
    shipped = get_abstract_judge()

    class Kept:  # the shipped model, keeping its last answer: the probabilities judge_abstracts read
        thresholds = shipped.thresholds

        def judge(self, claim, papers):
            self.last = shipped.judge(claim, papers)
            return self.last

    model = Kept()
    t0 = time.perf_counter()
    gold_labels, pred_labels, probs_all, y_all = [], [], [], []
    predicted = correct = correct_rationale = gold_total = 0
    for c in claims:
        docs = [d for d in hits.get(c.id, []) if d in corpus]
        gold_total += len(c.evidence)
        judged = judge_abstracts(
            c.claim, [(corpus[d].title, list(corpus[d].sentences)) for d in docs], model
        )
        for d, paper, r in zip(docs, judged, model.last if docs else [], strict=True):
            gold_labels.append(c.gold_label(d))
            pred_labels.append(paper.label)
            probs_all.append(r.probs)
            y_all.append(LABELS.index(c.gold_label(d)))
            if paper.label != "NEI":
                predicted += 1
                if c.gold_label(d) == paper.label:
                    correct += 1
                    correct_rationale += int(paper.indices[0] in c.rationale(d))
    took = time.perf_counter() - t0
    per = f1_per_label(gold_labels, pred_labels)
    macro = sum(per.values()) / 3

    def prf(n: int) -> tuple[float, float, float]:
        p, r = (n / predicted if predicted else 0.0), (n / gold_total if gold_total else 0.0)
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    label, rationale = prf(correct), prf(correct_rationale)
    cal = ece(np.stack(probs_all), np.asarray(y_all))
    print(
        f"model: abstract (thresholds {shipped.thresholds}, temperature {shipped.config.get('temperature')})"
    )
    print(
        f"train fold 0: {len(claims)} held-out claims × top {k} hits of the full-corpus search = {len(gold_labels)} "
        f"abstracts ({1e3 * took / max(len(gold_labels), 1):.0f} ms each, incl. model load)"
    )
    print(
        f"SciFact abstract-level, label only P/R/F1 {label[0]:.3f}/{label[1]:.3f}/{label[2]:.3f}; "
        f"label + rationale (the first quote) {rationale[0]:.3f}/{rationale[1]:.3f}/{rationale[2]:.3f}"
    )
    print(
        f"3-class macro-F1 over the candidates {macro:.3f}  "
        + "  ".join(f"F1[{k2}] {v:.3f}" for k2, v in per.items())
    )
    print(
        f"abstract-level ECE (15 bins, top label) {cal:.3f}; one fold only (folds 1-4 not trained), thresholds tuned on it"
    )
    print_summary(
        f"bench:verify split=train-fold0 label_only_f1={label[2]:.3f} label_rationale_f1={rationale[2]:.3f} "
        f"macro_f1={macro:.3f} ece={cal:.3f} claims={len(claims)} model=abstract"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=("train", "dev"), default="train")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--model",
        choices=("judgement", "abstract"),
        default="judgement",
        help="judgement: the sentence pair model and the abstract rule; abstract: the abstract-level model",
    )
    parser.add_argument(
        "--candidates",
        type=Path,
        default=Path.home() / ".cache" / "research-engine" / "scifact-full" / "candidates.jsonl",
    )
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    if args.model == "abstract":
        abstract_model(args.data, args.candidates, args.k)
        return
    judge = get_judge()
    if args.split == "train":
        train_cv(judge)
        return
    temperature = f"temperature {judge.config['pair']['temperature']:.2f}"
    from research_verification import LabelledPassage, PassageStance, Verdict, decide_verdict

    claims = load_claims(args.data / f"claims_{args.split}.jsonl")
    corpus = load_corpus(args.data / "corpus.jsonl")
    thresholds = judge.thresholds
    t0 = time.perf_counter()
    items, sentence_probs, sentence_gold = [], [], []
    verdicts: Counter[tuple[str, Verdict]] = Counter()
    for c in claims:
        passages = []
        for doc in c.cited_doc_ids:
            a = corpus[doc]
            probs = judge.stance(c.claim, list(a.sentences), [a.title] * len(a.sentences))
            sentence_probs.append(probs)
            sentence_gold += [
                LABELS.index(c.sentence_label(doc, i)) for i in range(len(a.sentences))
            ]
            decision = abstract_decision(probs, thresholds)
            items.append(
                ScoredAbstract(c.gold_label(doc), c.evidence.get(doc, ("NEI", ()))[1], decision)
            )
            if decision.label != "NEI":
                stance = (
                    PassageStance.SUPPORTS
                    if decision.label == "SUPPORT"
                    else PassageStance.CONTRADICTS
                )
                passages.append(
                    LabelledPassage(
                        str(doc),
                        stance,
                        round(decision.strength, 4),
                        0,
                        a.sentences[decision.rationale_indices[0]],
                    )
                )
        claim_gold = next(
            (c.gold_label(d) for d in c.cited_doc_ids if c.gold_label(d) != "NEI"), "NEI"
        )
        verdicts[(claim_gold, decide_verdict(passages).verdict)] += 1
    took = time.perf_counter() - t0
    gold, pred = [it.gold for it in items], [it.decision.label for it in items]
    per = f1_per_label(gold, pred)
    macro = sum(per.values()) / 3
    probs, y = np.concatenate(sentence_probs), np.asarray(sentence_gold)
    cal = ece(probs, y)
    rat = rationale_f1(items)
    print("model: judgement")
    print(
        f"SciFact {args.split}: {len(claims)} claims, {len(items)} cited abstracts, {len(y)} sentences "
        f"({1e3 * took / max(len(y), 1):.1f} ms/sentence incl. model load)"
    )
    print(f"abstract rule thresholds (tuned on train CV): {thresholds}; {temperature}")
    print("confusion (rows gold, columns predicted):  " + "  ".join(f"{p:>10}" for p in LABELS))
    for g in LABELS:
        print(
            f"  {g:>10}"
            + "".join(
                f"  {sum(1 for a, b in zip(gold, pred, strict=True) if a == g and b == p):>10}"
                for p in LABELS
            )
        )
    print(f"3-class macro-F1 {macro:.3f}  " + "  ".join(f"F1[{k}] {v:.3f}" for k, v in per.items()))
    print(f"SciFact sentence-level rationale selection F1 {rat:.3f}")
    print(
        f"SciFact abstract-level (oracle cited abstracts): label-only F1 {label_only_f1(items):.3f}, "
        f"label + rationale F1 {label_rationale_f1(items):.3f}"
    )
    print(f"sentence-level ECE (15 bins, top label) {cal:.3f}")
    print("verdicts by claim-level gold label:")
    for g in LABELS:
        row = {v: verdicts[(g, v)] for v in Verdict if verdicts[(g, v)]}
        print(f"  {g:>10}: " + ", ".join(f"{v} {n}" for v, n in row.items()))
    print("anchors:")
    for anchor in ANCHORS:
        print(f"  {anchor}")
    print_summary(line(args.split, macro, per, rat, cal, len(claims)) + " model=judgement")
    sys.stdout.flush()


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
