"""SciFact's metrics as `bench/verify.py` and `scripts/train_judgement.py` report them, plus the
abstract-level decision rule and calibration (temperature / Platt scaling, expected calibration error).

Abstract rule (constants tuned on out-of-fold train predictions, shipped in `judgement.json`):
a sentence is a rationale when its evidence probability `1 - P(NEI)` is at least `rationale`,
among the `top_k` best; no rationale → NEI; otherwise SUPPORT vs CONTRADICT by the summed
probabilities over the rationales, CONTRADICT's sum times `contradict_weight`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from research_judgement.scifact import LABELS

DEFAULT_THRESHOLDS = {"rationale": 0.5, "top_k": 3.0, "contradict_weight": 1.0}


@dataclass(frozen=True, slots=True)
class AbstractDecision:
    label: str  # SUPPORT | CONTRADICT | NEI
    strength: float
    rationale_indices: tuple[int, ...]


def abstract_decision(
    probs: np.ndarray, thresholds: dict[str, float] | None = None
) -> AbstractDecision:
    """Label an abstract from its sentences' (n, 3) probabilities in (SUPPORT, CONTRADICT, NEI) order."""
    t = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
    if len(probs) == 0:
        return AbstractDecision("NEI", 1.0, ())
    relevance = 1.0 - probs[:, 2]
    order = np.argsort(-relevance, kind="stable")[: int(t["top_k"])]
    rationales = [int(i) for i in order if relevance[i] >= t["rationale"]]
    if not rationales:
        return AbstractDecision("NEI", float(probs[order[0], 2]), ())
    support = float(probs[rationales, 0].sum())
    contradict = float(probs[rationales, 1].sum()) * t["contradict_weight"]
    column = 0 if support >= contradict else 1
    return AbstractDecision(
        LABELS[column], float(probs[rationales, column].max()), tuple(sorted(rationales))
    )


def f1_per_label(gold: Sequence[str], pred: Sequence[str]) -> dict[str, float]:
    out = {}
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, pred, strict=True))
        fp = sum(p == label != g for g, p in zip(gold, pred, strict=True))
        fn = sum(g == label != p for g, p in zip(gold, pred, strict=True))
        out[label] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return out


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    return sum(f1_per_label(gold, pred).values()) / 3


def _f1(correct: int, predicted: int, relevant: int) -> float:
    p = correct / predicted if predicted else 0.0
    r = correct / relevant if relevant else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True, slots=True)
class ScoredAbstract:
    """One (claim, cited abstract): gold label and rationale sets, predicted decision."""

    gold: str
    gold_sets: tuple[frozenset[int], ...]
    decision: AbstractDecision


def rationale_f1(items: Sequence[ScoredAbstract]) -> float:
    """SciFact sentence-level selection F1: a predicted sentence counts when it belongs to a gold
    rationale set all of whose sentences were predicted (only abstracts predicted SUPPORT/CONTRADICT
    contribute predicted sentences)."""
    correct = predicted = relevant = 0
    for it in items:
        chosen = set(it.decision.rationale_indices) if it.decision.label != "NEI" else set()
        predicted += len(chosen)
        relevant += len(frozenset().union(*it.gold_sets)) if it.gold_sets else 0
        hit: set[int] = set()
        for s in it.gold_sets:
            if s <= chosen:
                hit |= s
        correct += len(hit)
    return _f1(correct, predicted, relevant)


def label_rationale_f1(items: Sequence[ScoredAbstract]) -> float:
    """SciFact abstract-level "label + rationale" F1: right label and one whole gold set among the
    predicted rationale sentences."""
    correct = sum(
        1
        for it in items
        if it.gold != "NEI"
        and it.decision.label == it.gold
        and any(s <= set(it.decision.rationale_indices) for s in it.gold_sets)
    )
    return _f1(
        correct,
        sum(it.decision.label != "NEI" for it in items),
        sum(it.gold != "NEI" for it in items),
    )


def label_only_f1(items: Sequence[ScoredAbstract]) -> float:
    """SciFact abstract-level label-only F1 (oracle cited abstracts)."""
    correct = sum(1 for it in items if it.gold != "NEI" and it.decision.label == it.gold)
    return _f1(
        correct,
        sum(it.decision.label != "NEI" for it in items),
        sum(it.gold != "NEI" for it in items),
    )


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval (95 % by default) of `successes` in `trials`; (0, 1) for none."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    probs: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return probs


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (
        1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64))
    )  # = 1 / (1 + e^-x), no overflow


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """Temperature minimising the negative log-likelihood of held-out `logits` (grid search)."""
    best, best_nll = 1.0, np.inf
    for t in np.exp(np.linspace(np.log(0.25), np.log(8.0), 121)):
        p = softmax(logits, t)
        nll = -np.mean(np.log(p[np.arange(len(y)), y] + 1e-12))
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def fit_platt(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(a, b) with P(y=1) = sigmoid(a * score + b), fit by logistic regression on held-out scores.

    Damped Newton: a step that does not lower the negative log-likelihood is halved, so scores
    that separate the classes (large logits) cannot throw the fit off to infinity.
    """
    x, y = scores.astype(np.float64), y.astype(np.float64)

    def nll(a: float, b: float) -> float:
        z = a * x + b
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    a, b = 1.0, 0.0
    current = nll(a, b)
    for _ in range(200):
        p = sigmoid(a * x + b)
        g = np.array([np.sum((p - y) * x), np.sum(p - y)])
        w = p * (1 - p) + 1e-9
        h = np.array(
            [[np.sum(w * x * x), np.sum(w * x)], [np.sum(w * x), np.sum(w)]]
        ) + 1e-6 * np.eye(2)
        step = np.linalg.solve(h, g)
        scale = 1.0
        while scale > 1e-6 and nll(a - scale * step[0], b - scale * step[1]) > current:
            scale /= 2
        if scale <= 1e-6:
            break
        a, b = a - scale * step[0], b - scale * step[1]
        improved = nll(a, b)
        if current - improved < 1e-12:
            break
        current = improved
    return float(a), float(b)


def ece(probs: np.ndarray, y: np.ndarray, bins: int = 15) -> float:
    """Expected calibration error of the top-label confidence ((n, k) probabilities, or (n,) binary)."""
    if probs.ndim == 1:
        probs = np.stack([1 - probs, probs], axis=1)
    conf, pred = probs.max(axis=1), probs.argmax(axis=1)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            total += m.mean() * abs(float((pred[m] == y[m]).mean()) - float(conf[m].mean()))
    return float(total)


def tune_thresholds(
    abstract_probs: list[np.ndarray], gold: list[str]
) -> tuple[dict[str, float], float]:
    """Grid search of the abstract rule's constants on out-of-fold predictions (macro-F1)."""
    best, best_f1 = dict(DEFAULT_THRESHOLDS), -1.0
    for rationale, top_k, cw in itertools.product(
        (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), (1, 2, 3, 4), (0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0)
    ):
        t = {"rationale": rationale, "top_k": float(top_k), "contradict_weight": cw}
        f1 = macro_f1(gold, [abstract_decision(p, t).label for p in abstract_probs])
        if f1 > best_f1:
            best, best_f1 = t, f1
    return best, best_f1
