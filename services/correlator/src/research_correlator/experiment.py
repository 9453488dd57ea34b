"""The correlator's work: deterministic detectors propose candidates, the configured LLM confirms.

Detectors (pure functions over a `Cluster`), each returning at most one candidate:

- `shared_citation_cluster` — two or more claims cite the same source;
- `temporal_trend` — ordered by the median year of their sources, the claims' signed
  confidence (negated statements count negative) rises or falls consistently (Kendall tau);
- `dose_response` — statements state doses in one unit, and the effect (a stated percentage,
  else signed confidence) moves monotonically with the dose;
- `co_occurrence` — another entity the ledger knows is mentioned by two or more claims.

`decide` returns exactly one kind or none: the first model of the chain that answers
(`confirm.confirm`) confirms one candidate or says `no_pattern`; offline (or when every
model fails) the strongest candidate wins, ties broken by `PRECEDENCE`.
"""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from research_correlator import confirm
from research_correlator.prepare import Cluster, ClusterClaim
from research_llm import NoProviderAnswered, ProviderChain
from research_llm.offline.lexicon import negated

CO_OCCURRENCE = "co_occurrence"
TEMPORAL_TREND = "temporal_trend"
DOSE_RESPONSE = "dose_response"
SHARED_CITATION_CLUSTER = "shared_citation_cluster"
PRECEDENCE = (DOSE_RESPONSE, TEMPORAL_TREND, SHARED_CITATION_CLUSTER, CO_OCCURRENCE)
OFFLINE_MODEL = "offline-correlator"

_UNITS = {
    "mg": "mg",
    "milligrams": "mg",
    "g": "g",
    "grams": "g",
    "µg": "ug",
    "μg": "ug",
    "ug": "ug",
    "mcg": "ug",
    "iu": "iu",
    "ml": "ml",
    "mmol": "mmol",
    "units": "units",
    "kcal": "kcal",
    "mg/kg": "mg/kg",
    "mg/day": "mg",
    "iu/day": "iu",
    "minutes": "min",
    "min": "min",
    "hours": "h",
    "servings": "servings",
    "cups": "cups",
    "drinks": "drinks",
    "cigarettes": "cigarettes",
    "steps": "steps",
    "gy": "gy",
}
_DOSE = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*("
    + "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """A pattern a detector proposes for the cluster."""

    kind: str
    claim_ids: tuple[uuid.UUID, ...]
    score: float
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """The one pattern of the cluster (`kind=None` = no pattern), with who decided it."""

    kind: str | None
    claim_ids: tuple[uuid.UUID, ...]
    score: float
    reasoning: str
    model: str
    evidence: dict[str, Any] = field(default_factory=dict)
    candidates: tuple[str, ...] = ()


def _sign(claim: ClusterClaim) -> float:
    return -claim.confidence if negated(claim.statement) else claim.confidence


def _tau(xs: list[float], ys: list[float]) -> float:
    """Kendall's tau-a; 0 when there is nothing to compare."""
    pairs = list(combinations(range(len(xs)), 2))
    if not pairs:
        return 0.0
    total = 0
    for i, j in pairs:
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        total += (dx * dy > 0) - (dx * dy < 0)
    return total / len(pairs)


def shared_citations(cluster: Cluster) -> Candidate | None:
    citing: dict[str, set[uuid.UUID]] = defaultdict(set)
    for claim in cluster.claims:
        for source_id in claim.source_ids:
            citing[source_id].add(claim.claim_id)
    shared = {s: ids for s, ids in citing.items() if len(ids) >= 2}
    if not shared:
        return None
    members = set().union(*shared.values())
    score = min(0.95, 0.5 + 0.35 * len(members) / len(cluster.claims) + 0.05 * (len(shared) - 1))
    evidence = {"shared_sources": {s: sorted(map(str, ids)) for s, ids in sorted(shared.items())}}
    return Candidate(SHARED_CITATION_CLUSTER, _ordered(cluster, members), round(score, 3), evidence)


def temporal_trend(cluster: Cluster) -> Candidate | None:
    dated = [c for c in cluster.claims if c.evidence_year is not None]
    if len(dated) < 3 or len({c.evidence_year for c in dated}) < 3:
        return None
    years = [float(c.evidence_year or 0) for c in dated]
    tau = _tau(years, [_sign(c) for c in dated])
    if abs(tau) < 0.6:
        return None
    evidence = {
        "direction": "rising" if tau > 0 else "falling",
        "kendall_tau": round(tau, 3),
        "years": {str(c.claim_id): c.evidence_year for c in dated},
    }
    return Candidate(
        TEMPORAL_TREND,
        _ordered(cluster, {c.claim_id for c in dated}),
        round(abs(tau) * 0.95, 3),
        evidence,
    )


def parse_dose(statement: str) -> tuple[float, str] | None:
    """The first dose stated in `statement` as (value, normalised unit)."""
    match = _DOSE.search(statement)
    if not match:
        return None
    return float(match.group(1).replace(",", ".")), _UNITS[match.group(2).lower()]


def dose_response(cluster: Cluster) -> Candidate | None:
    by_unit: dict[str, list[tuple[float, ClusterClaim]]] = defaultdict(list)
    for claim in cluster.claims:
        dose = parse_dose(claim.statement)
        if dose:
            by_unit[dose[1]].append((dose[0], claim))
    best: Candidate | None = None
    for unit, dosed in by_unit.items():
        if len({d for d, _ in dosed}) < 2:
            continue
        effects = [_effect(c) for _, c in dosed]
        if len(set(effects)) < 2:
            continue
        tau = _tau([d for d, _ in dosed], effects)
        if abs(tau) < (1.0 if len(dosed) == 2 else 0.6):
            continue
        score = round(min(0.95, abs(tau) * (0.7 + 0.08 * (len(dosed) - 2))), 3)
        evidence = {
            "unit": unit,
            "direction": "increasing" if tau > 0 else "decreasing",
            "kendall_tau": round(tau, 3),
            "doses": {str(c.claim_id): d for d, c in dosed},
        }
        candidate = Candidate(
            DOSE_RESPONSE, _ordered(cluster, {c.claim_id for _, c in dosed}), score, evidence
        )
        if best is None or candidate.score > best.score:
            best = candidate
    return best


def _effect(claim: ClusterClaim) -> float:
    """A stated percentage (signed by the statement's polarity), else the signed confidence."""
    text = _DOSE.sub(" ", claim.statement)
    match = _PERCENT.search(text)
    if match:
        value = float(match.group(1))
        return -value if negated(claim.statement) else value
    return _sign(claim)


def co_occurrence(cluster: Cluster) -> Candidate | None:
    best: tuple[str, set[uuid.UUID]] | None = None
    for other in sorted(cluster.known_entities):
        if len(other) < 3:
            continue
        pattern = re.compile(rf"(?<![\w-]){re.escape(other)}(?![\w-])", re.IGNORECASE)
        mentioning = {c.claim_id for c in cluster.claims if pattern.search(c.statement)}
        if len(mentioning) >= 2 and (best is None or len(mentioning) > len(best[1])):
            best = (other, mentioning)
    if best is None:
        return None
    other, mentioning = best
    score = round(min(0.9, 0.4 + 0.5 * len(mentioning) / len(cluster.claims)), 3)
    return Candidate(
        CO_OCCURRENCE,
        _ordered(cluster, mentioning),
        score,
        {"co_entity": other, "mentions": len(mentioning)},
    )


DETECTORS = (dose_response, temporal_trend, shared_citations, co_occurrence)


def detect(cluster: Cluster, min_score: float) -> list[Candidate]:
    """Every detector's candidate at or above `min_score`, strongest first (ties by `PRECEDENCE`)."""
    found = [
        c
        for c in (detector(cluster) for detector in DETECTORS)
        if c is not None and c.score >= min_score
    ]
    return sorted(found, key=lambda c: (-c.score, PRECEDENCE.index(c.kind)))


def _ordered(cluster: Cluster, members: set[uuid.UUID]) -> tuple[uuid.UUID, ...]:
    return tuple(c.claim_id for c in cluster.claims if c.claim_id in members)


async def decide(
    cluster: Cluster, candidates: list[Candidate], chain: ProviderChain, timeout_s: float
) -> Decision:
    """One kind or none for the cluster: the first model that answers confirms; else the detectors."""
    kinds = tuple(c.kind for c in candidates)
    if not candidates:
        return Decision(None, cluster.claim_ids, 0.0, "no detector found a pattern", OFFLINE_MODEL)
    failures: list[str] = []
    try:
        answer, model = await confirm.confirm(
            chain,
            cluster.entity,
            [c.statement for c in cluster.claims],
            [{"kind": c.kind, "score": c.score, "evidence": c.evidence} for c in candidates],
            timeout_s,
        )
    except (
        NoProviderAnswered
    ) as exc:  # every model failed (or none is remote): the detectors decide
        failures = [f"{f.provider}: {f.reason}" for f in exc.failures]
    else:
        if answer.kind == "no_pattern":
            return Decision(None, cluster.claim_ids, 0.0, answer.reasoning, model, candidates=kinds)
        chosen = next((c for c in candidates if c.kind == answer.kind), None)
        if chosen is not None:
            return Decision(
                chosen.kind,
                chosen.claim_ids,
                chosen.score,
                answer.reasoning,
                model,
                chosen.evidence,
                kinds,
            )
        failures = [f"{model}: chose {answer.kind}, which no detector proposed"]
    best = candidates[0]
    reasoning = (
        f"deterministic detectors: {best.kind} scored {best.score:.2f}"
        + (f" (also: {', '.join(kinds[1:])})" if len(kinds) > 1 else "")
        + (f"; no model confirmed ({'; '.join(failures)})" if failures else "")
    )
    return Decision(
        best.kind, best.claim_ids, best.score, reasoning, OFFLINE_MODEL, best.evidence, kinds
    )
