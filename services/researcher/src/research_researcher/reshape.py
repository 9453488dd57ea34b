"""Make the drafted claim conform to the ledger's contract: only verifiable supports survive.

Quote verification is `research_llm.ground_supports` (the one check used): a support that
cites a source not among the evidence, or whose quote is not in that source's text, is
dropped and counted by reason before the claim is persisted.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from research_contracts import RunResearch
from research_ledger import AuditAction, ClaimProposal
from research_llm import DraftOutcome, EvidenceDoc, ground_supports

CLAIM_LIFETIME = timedelta(days=365)
NO_STATEMENT = "No statement could be drawn from the evidence."


ProposedClaim = ClaimProposal  # the ledger's input type: what this module conforms the draft to


def claim_id_for(task_id: uuid.UUID) -> uuid.UUID:
    """The one claim a task can yield: derived from the task id, so a redelivery maps to it."""
    return uuid.uuid5(task_id, "claim")


def to_claim(
    task: RunResearch,
    outcome: DraftOutcome,
    evidence: list[EvidenceDoc],
    *,
    provenance: dict[str, Any] | None = None,
    notes: list[tuple[AuditAction, dict[str, Any]]] | None = None,
) -> ProposedClaim:
    """The pending claim for `task`: grounded supports only; no support means zero confidence."""
    grounded = ground_supports(outcome.draft, evidence)
    confidence = outcome.draft.confidence if grounded.kept else 0.0
    return ProposedClaim(
        claim_id=claim_id_for(task.task_id),
        task_id=task.task_id,
        entity=task.entity or "",
        question=task.question,
        statement=outcome.draft.statement.strip() or NO_STATEMENT,
        confidence=max(0.0, min(1.0, confidence)),
        supports=grounded.kept,
        dropped_supports=grounded.dropped,
        model=f"{outcome.provider}:{outcome.model}",
        decay_at=datetime.now(UTC) + CLAIM_LIFETIME,
        failures=[
            {"provider": f.provider, "model": f.model, "reason": f.reason, "status": f.status}
            for f in outcome.failures
        ],
        provenance={
            "provider": outcome.provider,
            "llm_model": outcome.model,
            "dropped_unknown_source": grounded.unknown_source,
            "dropped_quote_not_found": grounded.quote_not_found,
            "llm_usage": outcome.usage,  # tokens in / out, cost, seconds of the draft (failed attempts included)
            **(provenance or {}),
        },
        notes=list(notes or []),
    )
