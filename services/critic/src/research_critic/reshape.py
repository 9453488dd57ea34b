"""Make a verdict conform to the ledger: supersede only names active claims of the same entity."""

from __future__ import annotations

import uuid

from research_contracts import CriticVerdict, Verdict
from research_llm import JudgeOutcome

PROMOTE_THRESHOLD = 0.5


def conform(outcome: JudgeOutcome, active_ids: set[uuid.UUID]) -> CriticVerdict:
    """The verdict as the ledger can apply it.

    A `supersede` naming no active claim of the entity becomes `promote` (or `reject` when its
    score is below the promotion threshold); supersede targets outside the entity are dropped.
    """
    verdict = outcome.verdict
    score = max(0.0, min(1.0, verdict.score))
    targets = [claim_id for claim_id in verdict.supersedes if claim_id in active_ids]
    kind = verdict.verdict
    if kind is Verdict.supersede and not targets:
        kind = Verdict.promote if score >= PROMOTE_THRESHOLD else Verdict.reject
    if kind is not Verdict.supersede:
        targets = []
    return CriticVerdict(
        verdict=kind,
        score=score,
        reasoning=verdict.reasoning.strip() or "no reasoning given",
        supersedes=targets,
        model=f"{outcome.provider}:{outcome.model}",
    )
