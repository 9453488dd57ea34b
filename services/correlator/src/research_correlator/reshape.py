"""Shape the correlator's decision as a finding and as audit payloads."""

from __future__ import annotations

from typing import Any

from research_correlator.experiment import PRECEDENCE, Decision
from research_ledger.findings import NewFinding


def finding(entity: str, decision: Decision) -> NewFinding:
    """The finding of a confirmed pattern; exactly one of the four kinds."""
    if decision.kind not in PRECEDENCE:
        raise ValueError(f"not a correlator finding kind: {decision.kind!r}")
    return NewFinding(
        kind=decision.kind,
        claim_ids=list(decision.claim_ids),
        payload={
            "entity": entity,
            "score": decision.score,
            "evidence": decision.evidence,
            "reasoning": decision.reasoning,
            "model": decision.model,
            "candidates": list(decision.candidates),
        },
    )


def finding_audit_payload(decision: Decision) -> dict[str, Any]:
    """The audit row of a recorded finding names the kind, its score and the deciding model."""
    return {"kind": decision.kind, "score": decision.score, "model": decision.model}


def no_pattern_payload(entity: str, decision: Decision, claims: int) -> dict[str, Any]:
    return {
        "entity": entity,
        "claims": claims,
        "reasoning": decision.reasoning,
        "model": decision.model,
        "candidates": list(decision.candidates),
    }
