"""The verdict rule: labelled passages → one of six verdicts and one of three confidences.

Both the offline classifier and the LLM engine label passages SUPPORTS / CONTRADICTS /
QUALIFIES / UNRELATED with a strength in [0, 1] (the classifier's probability, or the LLM's
stated confidence) and the source (paper) it came from; this one pure function turns those
labels into the verdict, so the two engines cannot disagree on the mapping.

The rule, in order:

1. **Ignore** passages labelled UNRELATED or weaker than `MIN_STRENGTH` (0.4).
2. **One stance per source and statement**: a source's passages about one statement are summed
   per label; the label with the largest sum is that source's stance (a tie between SUPPORTS and
   CONTRADICTS makes it QUALIFIES); its weight is the strongest passage with that label.
3. **Weights**: S, C, Q = summed weights of supporting, contradicting, qualifying stances;
   `support_share = (S + Q/2) / (S + C + Q/2)` (a qualification agrees under conditions, so it
   counts half). `coverage` = share of the claim's statements with at least one stance.
4. **Verdict**:
   - no stance at all → INSUFFICIENT EVIDENCE;
   - support_share ≥ 0.75 → STRONGLY SUPPORTED when ≥ 2 distinct supporting sources, no
     contradicting source, every statement covered and Q ≤ S; otherwise PARTIALLY SUPPORTED;
   - support_share ≤ 0.25 → CONTRADICTED when ≥ 2 distinct contradicting sources and no
     supporting source; otherwise WEAKLY CONTRADICTED;
   - in between → MIXED EVIDENCE.
5. **Confidence** (how likely the verdict is right, measured per level on held-out claims):
   the strongest calibrated probability among the verdict's side — the abstract model's P(SUPPORT)
   or P(CONTRADICT) (`LabelledPassage.probability`; an LLM's stated strength otherwise):
   - HIGH: ≥ `MODERATE_P` (0.80) in at least two distinct sources, and no source on the other side;
   - MODERATE: ≥ `MODERATE_P` in one source, and no source on the other side;
   - LOW: anything less, and always for MIXED and INSUFFICIENT EVIDENCE (they do not speak).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

MIN_STRENGTH = 0.4
# Confidence: the calibrated probability a source on the verdict's side needs, and how many such
# sources HIGH needs (held-out train claims: verdicts with a source at >= 0.80 were right 0.82 of
# the time, those without 0.72; bench/verdict_rules.py, docs/judgement.md).
MODERATE_P, HIGH_SOURCES = 0.8, 2


class PassageStance(StrEnum):
    SUPPORTS = "SUPPORTS"
    CONTRADICTS = "CONTRADICTS"
    QUALIFIES = "QUALIFIES"
    UNRELATED = "UNRELATED"


class Verdict(StrEnum):
    STRONGLY_SUPPORTED = "STRONGLY SUPPORTED"
    PARTIALLY_SUPPORTED = "PARTIALLY SUPPORTED"
    MIXED_EVIDENCE = "MIXED EVIDENCE"
    WEAKLY_CONTRADICTED = "WEAKLY CONTRADICTED"
    CONTRADICTED = "CONTRADICTED"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT EVIDENCE"


class Confidence(StrEnum):
    HIGH = "HIGH"
    MODERATE = "MODERATE"
    LOW = "LOW"


@dataclass(frozen=True, slots=True)
class LabelledPassage:
    """One retrieved passage as the classifier (or the LLM) judged it against one statement."""

    source_id: str
    label: PassageStance
    strength: float
    statement: int = 0
    text: str = ""
    conditions: tuple[
        str, ...
    ] = ()  # what a QUALIFIES passage holds under ("in women (population)")
    # An UNRELATED passage that leaned one way but did not count: the side, the bar it missed, why
    # (the report's "Closest Evidence (not counted)").
    leaning: str = ""
    bar: float = 0.0
    reason: str = ""
    # The calibrated probability of its label (the abstract model's P(SUPPORT) or P(CONTRADICT));
    # None when the labeller gives only a strength (an LLM's stated confidence).
    probability: float | None = None


@dataclass(frozen=True, slots=True)
class Assessment:
    """The verdict, its confidence and the counts that produced them (for the report's section 5)."""

    verdict: Verdict
    confidence: Confidence
    supporting_sources: int
    contradicting_sources: int
    qualifying_sources: int
    support_share: float
    coverage: float
    mean_strength: float

    @property
    def headline(self) -> str:
        """The report's one line: `Verdict: … · Confidence: …`."""
        return f"Verdict: {self.verdict} · Confidence: {self.confidence}"


def _stances(
    passages: Iterable[LabelledPassage],
) -> dict[tuple[str, int], tuple[PassageStance, float]]:
    sums: dict[tuple[str, int], dict[PassageStance, float]] = defaultdict(
        lambda: defaultdict(float)
    )
    best: dict[tuple[str, int, PassageStance], float] = defaultdict(float)
    for p in passages:
        if p.label is PassageStance.UNRELATED or p.strength < MIN_STRENGTH:
            continue
        sums[(p.source_id, p.statement)][p.label] += p.strength
        key = (p.source_id, p.statement, p.label)
        best[key] = max(best[key], p.strength)
    stances = {}
    for (source, statement), by_label in sums.items():
        label = max(by_label, key=lambda lab: by_label[lab])
        s, c = (
            by_label.get(PassageStance.SUPPORTS, 0.0),
            by_label.get(PassageStance.CONTRADICTS, 0.0),
        )
        if s and s == c:
            weight = max(
                best[(source, statement, PassageStance.SUPPORTS)],
                best[(source, statement, PassageStance.CONTRADICTS)],
            )
            stances[(source, statement)] = (PassageStance.QUALIFIES, weight)
        else:
            stances[(source, statement)] = (label, best[(source, statement, label)])
    return stances


def _confidence(
    verdict: Verdict,
    stances: dict[tuple[str, int], tuple[PassageStance, float]],
    passages: list[LabelledPassage],
) -> Confidence:
    """How likely the verdict is right: MODERATE when a source on its side reaches `MODERATE_P`
    (its calibrated `LabelledPassage.probability`, else its strength) and none stands against it,
    HIGH when `HIGH_SOURCES` distinct sources do; LOW otherwise, and for anything that abstains."""
    if verdict in (Verdict.INSUFFICIENT_EVIDENCE, Verdict.MIXED_EVIDENCE):
        return Confidence.LOW
    supported = verdict in (Verdict.STRONGLY_SUPPORTED, Verdict.PARTIALLY_SUPPORTED)
    side = (
        {PassageStance.SUPPORTS, PassageStance.QUALIFIES}
        if supported
        else {PassageStance.CONTRADICTS}
    )
    opposed = any(
        label not in side and label is not PassageStance.QUALIFIES for label, _ in stances.values()
    )
    sure: dict[str, float] = {}  # source -> its strongest calibrated probability on the side
    for p in passages:
        if p.label in side and p.strength >= MIN_STRENGTH:
            chance = p.probability if p.probability is not None else p.strength
            sure[p.source_id] = max(sure.get(p.source_id, 0.0), chance)
    if opposed or not sure or max(sure.values()) < MODERATE_P:
        return Confidence.LOW
    agreeing = sum(  # qualified support holds only under its conditions: it never makes HIGH
        chance >= MODERATE_P
        for source, chance in sure.items()
        if any(p.source_id == source and p.label is not PassageStance.QUALIFIES for p in passages)
    )
    return Confidence.HIGH if agreeing >= HIGH_SOURCES else Confidence.MODERATE


def decide_verdict(passages: Iterable[LabelledPassage], statements: int = 1) -> Assessment:
    """Apply the rule in the module docstring. `statements` is how many the claim was split into."""
    passages_list = list(passages)
    stances = _stances(passages_list)
    by_label: dict[PassageStance, set[str]] = defaultdict(set)
    weight: dict[PassageStance, float] = defaultdict(float)
    for (source, _), (label, w) in stances.items():
        by_label[label].add(source)
        weight[label] += w
    covered = {statement for (_, statement) in stances}
    coverage = len(covered) / max(statements, 1)
    s_w, c_w, q_w = (
        weight[PassageStance.SUPPORTS],
        weight[PassageStance.CONTRADICTS],
        weight[PassageStance.QUALIFIES],
    )
    n_support, n_contra = (
        len(by_label[PassageStance.SUPPORTS]),
        len(by_label[PassageStance.CONTRADICTS]),
    )
    mean_strength = sum(w for _, w in stances.values()) / len(stances) if stances else 0.0

    if not stances:
        verdict, share = Verdict.INSUFFICIENT_EVIDENCE, 0.0
    else:
        share = (s_w + q_w / 2) / (s_w + c_w + q_w / 2)
        if share >= 0.75:
            strong = n_support >= 2 and n_contra == 0 and coverage >= 1.0 and q_w <= s_w
            verdict = Verdict.STRONGLY_SUPPORTED if strong else Verdict.PARTIALLY_SUPPORTED
        elif share <= 0.25:
            verdict = (
                Verdict.CONTRADICTED
                if n_contra >= 2 and n_support == 0
                else Verdict.WEAKLY_CONTRADICTED
            )
        else:
            verdict = Verdict.MIXED_EVIDENCE

    confidence = _confidence(verdict, stances, passages_list)
    return Assessment(
        verdict,
        confidence,
        n_support,
        n_contra,
        len(by_label[PassageStance.QUALIFIES]),
        round(share, 4),
        round(coverage, 4),
        round(mean_strength, 4),
    )
