"""Make a verdict conform to the ledger — the one place the supersede rule lives.

A model (remote or offline) may name claims it was never shown, or answer `supersede` without
naming any claim it could replace. The ledger can only supersede active claims of the same
entity that the critic actually considered, so:

- supersede targets outside the considered claims are dropped;
- a `supersede` left with no target becomes `promote`: the critic still judged the new claim
  worth keeping (a `promote` is not score-gated either, so neither is this fallback);
- `promote` and `reject` never carry supersede targets.

The provider chain returns verdicts as the model gave them; only this module bounds them.
"""

from __future__ import annotations

import uuid

from research_contracts import CriticVerdict, Verdict
from research_llm import JudgeOutcome


def conform(outcome: JudgeOutcome, considered: set[uuid.UUID]) -> CriticVerdict:
    """The verdict as the ledger can apply it, labelled `provider:model`."""
    verdict = outcome.verdict
    kind = verdict.verdict
    reasoning = verdict.reasoning.strip() or "no reasoning given"
    targets = [claim_id for claim_id in dict.fromkeys(verdict.supersedes) if claim_id in considered]
    if kind is Verdict.supersede and not targets:
        kind = Verdict.promote
        reasoning += " (named no active claim to supersede; promoted instead)"
    if kind is not Verdict.supersede:
        targets = []
    return CriticVerdict(
        verdict=kind,
        score=verdict.score,
        reasoning=reasoning,
        supersedes=targets,
        model=f"{outcome.provider}:{outcome.model}",
    )
