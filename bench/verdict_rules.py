"""Choose the verdict rule offline, by cross-validation on cached held-out train claims.

`bench/verdict_cache.py` stores, for each claim, every paper the verifier's offline engine judges
with the abstract model's probabilities and each sentence's scores. This replays the verifier's
decision on that cache for every rule of a grid (`research_verification.evidence.Rule`: the
evidence floors, the side bars, the sentence floor, the direction check), through the engine's own
pure functions (`decide_paper`, `label_passages`, `decide_verdict`), and reports what a user acts
on: the verdict's SUPPORTED precision and recall, CONTRADICT recall, claim-level macro-F1,
SciFact's abstract-level label-only F1, the claims with evidence that cite nothing, and precision
per confidence level — each rate with its Wilson 95 % interval.

Selection, for a verdict that is right when it speaks: among the rules whose SUPPORTED precision
is at least `--precision` (0.80) and SUPPORT recall at least `--recall` (0.65), the best
claim-level macro-F1; when none qualifies, the best SUPPORTED precision at that recall. 5-fold
cross-validation over the cached claims: each fold's rule is chosen on the other four and scored
on it (the figures printed as `cv`); the rule to ship is then chosen on all of them.

    .venv/bin/python bench/verdict_rules.py [--cache FILE] [--show RULE_JSON]

Ends with:

    bench:verdict_rules cv_support_precision=… cv_support_recall=… cv_contradict_recall=… cv_claim_macro_f1=… cv_scifact_f1=… claims=…
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from full_corpus import corpus_dir

sys.path.insert(0, str(REPO))
from bench.harness.results import print_summary
from research_judgement.metrics import f1_per_label, wilson
from research_judgement.scifact import LABELS
from research_verification.evidence import Rule, decide_paper
from research_verification.passages import SentencePrediction, label_passages
from research_verification.verdict import decide_verdict

MAPPING = {
    "STRONGLY SUPPORTED": "SUPPORT",
    "PARTIALLY SUPPORTED": "SUPPORT",
    "WEAKLY CONTRADICTED": "CONTRADICT",
    "CONTRADICTED": "CONTRADICT",
    "MIXED EVIDENCE": "NEI",
    "INSUFFICIENT EVIDENCE": "NEI",
}
SHIPPED_BEFORE = Rule(evidence=0.9, best_evidence=0.2, contradict_weight=0.8)  # the rule before
SHOW_FLOOR = 0.2  # the nearest miss of a call is shown from this P(evidence): it changes no verdict


@dataclass
class Outcome:
    """One claim under one rule: its verdict, its confidence and what it cites on each side."""

    gold: str
    verdict: str
    confidence: str
    cited: dict[int, str]  # doc → side, the abstracts quoted as corroborating / contradicting
    any_cited: bool  # counted or closest: the report names a paper
    top: float = 0.0  # the highest calibrated P(label) among the papers on the verdict's side


def replay(row: dict, rule: Rule) -> Outcome:
    """The verifier's decision on one cached claim, through the engine's own functions."""
    labelled = []
    cited: dict[int, str] = {}
    probability: dict[int, float] = {}
    closest = False
    for index, statement in enumerate(row["statements"]):
        papers = statement["papers"]
        best = max(range(len(papers)), key=lambda i: 1 - papers[i]["probs"][2], default=None)
        for n, paper in enumerate(papers):
            sentences = paper["sentences"]
            stance = np.asarray(paper["stance"], dtype=np.float32)
            evidence = 1.0 - stance[:, 2] if len(stance) else None
            call = decide_paper(
                statement["text"],
                sentences,
                paper["probs"],
                np.asarray(paper["rationale"], dtype=np.float32),
                evidence,
                paper["names_subject"],
                rule,
                most_evidential=n == best,
            )
            if call.label == "NEI":
                closest = closest or bool(call.leaning)
                continue
            passages = _passages(statement["text"], paper, index, call.label, call.chosen)
            labelled += passages
            side = _side(passages)
            if side:
                cited[paper["doc"]] = side
                probability[paper["doc"]] = call.strength
    return _outcome(row, labelled, cited, closest, probability)


_SIDE = {"SUPPORTS": "SUPPORT", "QUALIFIES": "SUPPORT", "CONTRADICTS": "CONTRADICT"}


def _passages(claim: str, paper: dict, index: int, label: str, chosen: tuple[int, ...]) -> list:
    s, c, nei = paper["probs"]
    if (
        label == "CONTRADICT" and s > c
    ):  # a direction flip: the paper's support is its contradiction
        s, c = c, s
    predictions = [SentencePrediction(paper["sentences"][i], label, s, c, nei) for i in chosen]
    return label_passages(predictions, str(paper["doc"]), index, claim, label)


def _side(passages: list) -> str:
    counted = [_SIDE[p.label] for p in passages if p.label in _SIDE and p.strength >= 0.4]
    return counted[0] if counted else ""


def _outcome(
    row: dict, labelled: list, cited: dict[int, str], closest: bool, probability: dict[int, float]
) -> Outcome:
    assessment = decide_verdict(labelled, max(len(row["statements"]), 1))
    side = MAPPING[str(assessment.verdict)]
    top = max((probability[d] for d, s in cited.items() if s == side), default=0.0)
    return Outcome(
        row["gold"],
        str(assessment.verdict),
        str(assessment.confidence),
        cited,
        bool(cited) or closest,
        round(top, 6),
    )


@dataclass
class Prepared:
    """What `decide_paper` reads of one cached paper that no rule changes, computed once."""

    doc: int
    statement: int
    probs: tuple[float, float, float]
    most_evidential: bool
    empty: bool
    chosen: tuple[int, ...]
    best_evidence: float  # the best quote's sentence-level P(evidence)
    turned: bool  # the best quote's direction words point against the claim's
    passages: dict[str, list]  # label → its labelled passages


def prepare(row: dict) -> list[Prepared]:
    from research_verification.direction import conflict
    from research_verification.evidence import SUBJECT_BONUS

    out = []
    for index, statement in enumerate(row["statements"]):
        papers = statement["papers"]
        best = max(range(len(papers)), key=lambda i: 1 - papers[i]["probs"][2], default=None)
        for n, paper in enumerate(papers):
            sentences = paper["sentences"]
            if not sentences:
                out.append(
                    Prepared(
                        paper["doc"],
                        index,
                        tuple(paper["probs"]),
                        n == best,
                        True,
                        (),
                        0.0,
                        False,
                        {},
                    )
                )
                continue
            stance = np.asarray(paper["stance"], dtype=np.float32)
            evidence = 1.0 - stance[:, 2]
            rationale = np.asarray(paper["rationale"], dtype=np.float32)
            score = (
                rationale
                + evidence
                + SUBJECT_BONUS * np.asarray(paper["names_subject"], dtype=np.float32)
            )
            order = [int(i) for i in np.argsort(-score, kind="stable")[:2]]
            chosen = tuple(i for k, i in enumerate(order) if k == 0 or rationale[i] >= 0.5)
            passages = {
                label: _passages(statement["text"], paper, index, label, chosen)
                for label in ("SUPPORT", "CONTRADICT")
            }
            out.append(
                Prepared(
                    paper["doc"],
                    index,
                    tuple(paper["probs"]),
                    n == best,
                    False,
                    chosen,
                    float(evidence[chosen[0]]),
                    conflict(statement["text"], sentences[chosen[0]]) is not None,
                    passages,
                )
            )
    return out


def fast_replay(row: dict, prepared: list[Prepared], rule: Rule) -> Outcome:
    """`replay` on prepared papers: the same arithmetic as `decide_paper` (checked against it)."""
    labelled: list = []
    cited: dict[int, str] = {}
    chance: dict[int, float] = {}
    closest = False
    for p in prepared:
        support, contradict, nei = p.probs
        floor = rule.best_evidence if p.most_evidential else rule.evidence
        if p.empty or 1.0 - nei < floor:
            closest = closest or (
                not p.empty and p.most_evidential and 1.0 - nei >= rule.show_floor
            )
            continue
        label = "SUPPORT" if support >= contradict * rule.contradict_weight else "CONTRADICT"
        if rule.direction != "off" and p.turned:
            if rule.direction == "flip" and label == "SUPPORT":
                label, support, contradict = "CONTRADICT", contradict, support
            elif rule.direction == "abstain":
                closest = True
                continue
        probability = support if label == "SUPPORT" else contradict
        bar = rule.support_bar if label == "SUPPORT" else rule.contradict_bar
        if probability < bar or p.best_evidence < rule.sentence_floor:
            closest = True
            continue
        passages = p.passages[label]
        labelled += passages
        side = _side(passages)
        if side:
            cited[p.doc] = side
            chance[p.doc] = probability
    return _outcome(row, labelled, cited, closest, chance)


def gold_docs(row: dict) -> dict[int, str]:
    out = {}
    for statement in row["statements"]:
        for paper in statement["papers"]:
            if paper["gold_label"]:
                out[paper["doc"]] = paper["gold_label"]
    return out


def scores(rows: list[dict], outcomes: list[Outcome]) -> dict[str, float]:
    gold = [o.gold for o in outcomes]
    pred = [MAPPING[o.verdict] for o in outcomes]
    said_support = [g for g, p in zip(gold, pred, strict=True) if p == "SUPPORT"]
    support_right = sum(g == "SUPPORT" for g in said_support)
    n_support = sum(g == "SUPPORT" for g in gold)
    n_contra = sum(g == "CONTRADICT" for g in gold)
    contra_right = sum(g == p == "CONTRADICT" for g, p in zip(gold, pred, strict=True))
    said_contra = sum(p == "CONTRADICT" for p in pred)
    support_found = sum(g == p == "SUPPORT" for g, p in zip(gold, pred, strict=True))
    per = f1_per_label(gold, pred)
    predicted = correct = 0
    n_gold = 0
    for row, o in zip(rows, outcomes, strict=True):
        docs = row["gold_docs"]
        n_gold += len(docs)
        for doc, side in o.cited.items():
            predicted += 1
            correct += int(docs.get(doc) == side)
    p = correct / predicted if predicted else 0.0
    r = correct / n_gold if n_gold else 0.0
    with_evidence = [o for o in outcomes if o.gold != "NEI"]
    return {
        "support_precision": support_right / len(said_support) if said_support else 0.0,
        "support_said": len(said_support),
        "support_right": support_right,
        "support_recall": support_found / n_support if n_support else 0.0,
        "support_n": n_support,
        "support_found": support_found,
        "contradict_recall": contra_right / n_contra if n_contra else 0.0,
        "contradict_precision": contra_right / said_contra if said_contra else 0.0,
        "contradict_n": n_contra,
        "contradict_right": contra_right,
        "claim_macro_f1": sum(per.values()) / 3,
        "f1_contradict": per["CONTRADICT"],
        "scifact_f1": 2 * p * r / (p + r) if p + r else 0.0,
        "scifact_p": p,
        "scifact_r": r,
        "cite_nothing": (
            sum(not o.any_cited for o in with_evidence) / len(with_evidence)
            if with_evidence
            else 0.0
        ),
    }


def eligible(s: dict[str, float], precision: float, recall: float) -> bool:
    return s["support_precision"] >= precision and s["support_recall"] >= recall


def choose(candidates: list[tuple[Rule, dict[str, float]]], precision: float, recall: float) -> int:
    """The index of the chosen rule (see the module docstring)."""
    ok = [i for i, (_, s) in enumerate(candidates) if eligible(s, precision, recall)]
    if ok:
        return max(
            ok,
            key=lambda i: (
                candidates[i][1]["claim_macro_f1"],
                candidates[i][1]["contradict_recall"],
            ),
        )
    at_recall = [i for i, (_, s) in enumerate(candidates) if s["support_recall"] >= recall]
    pool = at_recall or list(range(len(candidates)))
    return max(
        pool,
        key=lambda i: (candidates[i][1]["support_precision"], candidates[i][1]["claim_macro_f1"]),
    )


def grid() -> list[Rule]:
    rules = []
    for (
        evidence,
        best_evidence,
        weight,
        support_bar,
        contradict_bar,
        floor,
        direction,
    ) in itertools.product(
        (0.5, 0.7, 0.9),
        (0.2, 0.4, 0.6),
        (0.5, 0.8, 1.0),
        (0.0, 0.6, 0.7, 0.8, 0.85, 0.9),
        (0.0, 0.4, 0.5, 0.6),
        (0.0, 0.2, 0.4, 0.6),
        ("off", "abstain", "flip"),
    ):
        rules.append(
            Rule(
                evidence,
                min(evidence, best_evidence),
                weight,
                support_bar,
                contradict_bar,
                floor,
                direction,
                SHOW_FLOOR,
            )
        )
    return rules


def table(outcomes: list[Outcome]) -> str:
    lines = ["gold \\ verdict   " + "  ".join(f"{p:>10}" for p in LABELS)]
    for g in LABELS:
        lines.append(
            f"  {g:14}"
            + "".join(
                f"{sum(1 for o in outcomes if o.gold == g and MAPPING[o.verdict] == p):12}"
                for p in LABELS
            )
        )
    return "\n".join(lines)


def by_probability(outcomes: list[Outcome]) -> str:
    """Verdict precision by the strongest calibrated P on the verdict's side (to set confidence levels)."""
    parts = []
    for low, high in ((0.0, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 0.95), (0.95, 0.98), (0.98, 1.01)):
        spoke = [o for o in outcomes if MAPPING[o.verdict] != "NEI" and low <= o.top < high]
        right = sum(MAPPING[o.verdict] == o.gold for o in spoke)
        parts.append(f"[{low:.2f}, {min(high, 1):.2f}): {right}/{len(spoke)}")
    return "verdict precision by the strongest P on its side: " + "; ".join(parts)


def by_confidence(outcomes: list[Outcome]) -> str:
    parts = []
    for level in ("HIGH", "MODERATE", "LOW"):
        spoke = [o for o in outcomes if o.confidence == level and MAPPING[o.verdict] != "NEI"]
        right = sum(MAPPING[o.verdict] == o.gold for o in spoke)
        low, high = wilson(right, len(spoke))
        parts.append(
            f"{level}: {right}/{len(spoke)} right"
            + (f" ({right / len(spoke):.2f}, 95 % {low:.2f}–{high:.2f})" if spoke else "")
        )
    return "verdict precision by confidence (SUPPORTED or CONTRADICTED verdicts): " + "; ".join(
        parts
    )


def report(name: str, s: dict[str, float]) -> None:
    sp = wilson(int(s["support_right"]), int(s["support_said"]))
    sr = wilson(int(s["support_found"]), int(s["support_n"]))
    cr = wilson(int(s["contradict_right"]), int(s["contradict_n"]))
    print(
        f"{name}: support_precision {s['support_precision']:.3f} [{sp[0]:.2f}, {sp[1]:.2f}] "
        f"({int(s['support_right'])}/{int(s['support_said'])}), support_recall {s['support_recall']:.3f} "
        f"[{sr[0]:.2f}, {sr[1]:.2f}], contradict_recall {s['contradict_recall']:.3f} [{cr[0]:.2f}, {cr[1]:.2f}] "
        f"({int(s['contradict_right'])}/{int(s['contradict_n'])}), claim_macro_f1 {s['claim_macro_f1']:.3f}, "
        f"scifact_f1 {s['scifact_f1']:.3f} (P {s['scifact_p']:.3f} R {s['scifact_r']:.3f}), "
        f"cite_nothing {s['cite_nothing']:.3f}"
    )


def ship(rule: Rule, cv: dict[str, float], claims: int) -> None:
    """The chosen rule into `weights/abstract/abstract.json` (`thresholds`, read by `Rule.of`)."""
    from research_judgement.abstract import WEIGHTS

    path = WEIGHTS / "abstract.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["thresholds"] = {k: v for k, v in asdict(rule).items()}
    config["rule_cv"] = {
        "note": f"5-fold cross-validation over {claims} held-out train claims (fold 0), "
        "bench/verdict_rules.py on bench/verdict_cache.py's cache",
        **{k: round(float(v), 4) for k, v in cv.items()},
    }
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"wrote the rule into {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="default <data dir>/verdict-cache-train.jsonl")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--precision", type=float, default=0.80)
    parser.add_argument("--recall", type=float, default=0.65)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--show", help="score only this rule (JSON of Rule fields), no search")
    parser.add_argument(
        "--ship",
        action="store_true",
        help="write the chosen rule into the shipped abstract model's abstract.json (thresholds)",
    )
    args = parser.parse_args()
    path = args.cache or corpus_dir(args.data_dir) / "verdict-cache-train.jsonl"
    rows = [json.loads(line) for line in path.open() if line.strip()]
    for row in rows:
        row["gold_docs"] = gold_docs(row)
    if args.show:
        rule = replace(Rule(), **json.loads(args.show))
        shown = [replay(r, rule) for r in rows]
        assert shown == [fast_replay(r, prepare(r), rule) for r in rows]
        report(f"rule {asdict(rule)}", scores(rows, shown))
        print(table(shown))
        print(by_confidence(shown))
        print(by_probability(shown))
        return

    rules = grid()
    print(f"{len(rows)} cached claims, {len(rules)} rules", flush=True)
    prepared = [prepare(r) for r in rows]
    for rule in (
        SHIPPED_BEFORE,
        Rule(0.7, 0.4, 1.0, 0.8, 0.5, 0.3, "flip"),
        Rule(0.5, 0.2, 0.8, 0.6, 0.4, 0.2, "abstain"),
        Rule(0.5, 0.5, 0.5, 0.0, 0.4, 0.6, "flip", SHOW_FLOOR),
    ):
        for r, p in zip(
            rows, prepared, strict=True
        ):  # the fast replay decides as the engine's functions do
            assert fast_replay(r, p, rule) == replay(r, rule), (rule, r["id"])
    outcomes = [
        [fast_replay(r, p, rule) for r, p in zip(rows, prepared, strict=True)] for rule in rules
    ]
    folds = [i % args.folds for i in range(len(rows))]
    held: list[Outcome | None] = [None] * len(rows)
    for k in range(args.folds):
        train = [i for i in range(len(rows)) if folds[i] != k]
        candidates = [
            (rule, scores([rows[i] for i in train], [o[i] for i in train]))
            for rule, o in zip(rules, outcomes, strict=True)
        ]
        pick = choose(candidates, args.precision, args.recall)
        print(f"fold {k}: chose {asdict(rules[pick])}", flush=True)
        for i in range(len(rows)):
            if folds[i] == k:
                held[i] = outcomes[pick][i]
    cv = [o for o in held if o is not None]
    before = [replay(r, SHIPPED_BEFORE) for r in rows]
    report("before (the rule shipped so far)", scores(rows, before))
    print(table(before))
    s_cv = scores(rows, cv)
    report("cv (each fold's rule chosen on the other folds)", s_cv)
    print(table(cv))
    print(by_confidence(cv))
    print(by_probability(cv))
    everything = [(rule, scores(rows, o)) for rule, o in zip(rules, outcomes, strict=True)]
    pick = choose(everything, args.precision, args.recall)
    print(f"to ship (chosen on all {len(rows)} claims): {json.dumps(asdict(rules[pick]))}")
    report("  in-sample", everything[pick][1])
    if args.ship:
        ship(rules[pick], s_cv, len(rows))
    print_summary(
        f"bench:verdict_rules cv_support_precision={s_cv['support_precision']:.4f} "
        f"cv_support_recall={s_cv['support_recall']:.4f} cv_contradict_recall={s_cv['contradict_recall']:.4f} "
        f"cv_claim_macro_f1={s_cv['claim_macro_f1']:.4f} cv_scifact_f1={s_cv['scifact_f1']:.4f} "
        f"claims={len(rows)}"
    )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
