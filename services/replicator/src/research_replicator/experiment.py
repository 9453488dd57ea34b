"""The replicator's judgement: compare fresh evidence with a claim and its old supports.

    retracted_source  a cited source is retracted (the ledger knows it, or a fresh hit says
                      so: `metadata.retracted` from CrossRef `updated-by`, or a PubMed
                      "Retracted Publication" type) — takes precedence;
    eroded            the trained stance model (`research_verification.judge_paper`: the claim's
                      statement against each fresh abstract's sentences) finds fresh sources
                      contradicting the claim at least as strongly as others support it; or
                      no fresh source takes a stance and less than `erosion_threshold` of the
                      old supports are still there with their quote;
    confirmed         a fresh source supports the claim (and the contradictions weigh less),
                      or no fresh source takes a stance and the old quotes still stand.

No fresh evidence at all is not erosion: the run is skipped (`no_fresh_evidence`). Only the
`judged_sources` first fresh hits are judged — the claim's own sources first — so a re-run
costs a bounded number of model calls. No database, no broker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from research_contracts import EvidenceRefreshed, SourceHit
from research_replicator.prepare import DueClaim
from research_reports.text import split_sentences
from research_verification import judge_paper
from research_verification.evidence import Judgement
from research_verification.stance import question_as_statement

ERODED = "eroded"
RETRACTED_SOURCE = "retracted_source"
CONFIRMED = "confirmed"
FINDING_VERDICTS = (
    ERODED,
    RETRACTED_SOURCE,
)  # the verdicts recorded as findings (and re-critiqued)

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Comparison:
    verdict: str | None  # None = skipped
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def is_retracted(hit: SourceHit) -> bool:
    meta = hit.metadata or {}
    if meta.get("retracted") is True:
        return True
    types = [str(t).lower() for t in meta.get("publication_types", []) or []]
    return "retracted publication" in types


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def stances(
    statement: str,
    hits: list[SourceHit],
    cited: list[str],
    judged_sources: int,
    judge: Judgement | None = None,
) -> dict[str, tuple[str, float]]:
    """source id → (SUPPORT | CONTRADICT, strength) for the fresh hits that take a stance on
    `statement`; the claim's own sources are judged first, then the others in search order."""
    order = sorted(hits, key=lambda h: (h.source_id not in cited,))[:judged_sources]
    out = {}
    for hit in order:
        paper = judge_paper(
            statement, hit.title or None, split_sentences(hit.abstract or ""), judge
        )
        if paper.label != "NEI":
            out[hit.source_id] = (paper.label, round(paper.strength, 4))
    return out


def compare(  # noqa: PLR0911 - each skip and each verdict answers at once with its reason
    claim: DueClaim,
    fresh: EvidenceRefreshed,
    retracted_known: set[str],
    erosion_threshold: float,
    judged_sources: int = 6,
    judge: Judgement | None = None,
) -> Comparison:
    """The verdict on `claim` given today's evidence, or a skip with its reason."""
    if not claim.supports:
        return Comparison(None, "no_supports")
    if fresh.error:
        return Comparison(None, "rerun_failed", {"error": fresh.error})
    hits = {h.source_id: h for h in fresh.hits}
    cited = list(dict.fromkeys(s.source_id for s in claim.supports))
    retracted = sorted(
        {s for s in cited if s in retracted_known or (s in hits and is_retracted(hits[s]))}
    )
    if retracted:
        return Comparison(RETRACTED_SOURCE, details={"retracted": retracted, "cited": cited})
    if not hits:
        return Comparison(None, "no_fresh_evidence", {"degraded": fresh.degraded})
    kept: list[str] = []
    lost: list[str] = []
    for support in claim.supports:
        hit = hits.get(support.source_id)
        text = _norm(f"{hit.title} {hit.abstract}") if hit else ""
        still = hit is not None and (not hit.abstract or _norm(support.quote) in text)
        (kept if still else lost).append(support.source_id)
    share = len(kept) / len(claim.supports)
    statement = claim.statement.strip() or question_as_statement(claim.question)
    judged = stances(statement, list(hits.values()), cited, judged_sources, judge)
    supporting = {s: w for s, (label, w) in judged.items() if label == "SUPPORT"}
    contradicting = {s: w for s, (label, w) in judged.items() if label == "CONTRADICT"}
    details = {
        "kept": kept,
        "lost": lost,
        "share_kept": round(share, 3),
        "fresh_hits": len(hits),
        "new_sources": sorted(set(hits) - set(cited))[:20],
        "supporting": sorted(supporting),
        "contradicting": sorted(contradicting),
    }
    if contradicting and sum(contradicting.values()) >= sum(supporting.values()):
        return Comparison(
            ERODED, details={**details, "basis": "fresh evidence contradicts the claim"}
        )
    if supporting:
        return Comparison(
            CONFIRMED, details={**details, "basis": "fresh evidence supports the claim"}
        )
    verdict = ERODED if share < erosion_threshold else CONFIRMED
    return Comparison(
        verdict,
        details={
            **details,
            "basis": "no fresh stance; the old quotes "
            + ("are gone" if verdict == ERODED else "still stand"),
        },
    )
