"""The replicator's judgement (pure logic): compare fresh evidence with a claim's old supports.

    retracted_source  a cited source is retracted (the ledger knows it, or a fresh hit says
                      so: `metadata.retracted` from CrossRef `updated-by`, or a PubMed
                      "Retracted Publication" type) — takes precedence;
    eroded            fresh evidence came back, but less than `erosion_threshold` of the old
                      supports are still in it with their quote;
    confirmed         otherwise.

No fresh evidence at all is not erosion: the run is skipped (`no_fresh_evidence`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from research_contracts import EvidenceRefreshed, SourceHit
from research_replicator.prepare import DueClaim

ERODED = "eroded"
RETRACTED_SOURCE = "retracted_source"
CONFIRMED = "confirmed"
FINDING_VERDICTS = (ERODED, RETRACTED_SOURCE)  # the verdicts recorded as findings (and re-critiqued)

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


def compare(claim: DueClaim, fresh: EvidenceRefreshed, retracted_known: set[str], erosion_threshold: float) -> Comparison:
    """The verdict on `claim` given today's evidence, or a skip with its reason."""
    if not claim.supports:
        return Comparison(None, "no_supports")
    if fresh.error:
        return Comparison(None, "rerun_failed", {"error": fresh.error})
    hits = {h.source_id: h for h in fresh.hits}
    cited = list(dict.fromkeys(s.source_id for s in claim.supports))
    retracted = sorted({s for s in cited if s in retracted_known or (s in hits and is_retracted(hits[s]))})
    if retracted:
        return Comparison(RETRACTED_SOURCE, details={"retracted": retracted, "cited": cited})
    if not hits:
        return Comparison(None, "no_fresh_evidence", {"degraded": fresh.degraded})
    kept, lost = [], []
    for support in claim.supports:
        hit = hits.get(support.source_id)
        text = _norm(f"{hit.title} {hit.abstract}") if hit else ""
        still = hit is not None and (not hit.abstract or _norm(support.quote) in text)
        (kept if still else lost).append(support.source_id)
    share = len(kept) / len(claim.supports)
    details = {
        "kept": kept,
        "lost": lost,
        "share_kept": round(share, 3),
        "fresh_hits": len(hits),
        "new_sources": sorted(set(hits) - set(cited))[:20],
    }
    return Comparison(ERODED if share < erosion_threshold else CONFIRMED, details=details)
