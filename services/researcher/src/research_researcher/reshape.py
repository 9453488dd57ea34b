"""Make the drafted claim conform to the ledger's contract: only verifiable supports survive."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from research_contracts import RunResearch, Support
from research_llm import DraftOutcome, EvidenceDoc

CLAIM_LIFETIME = timedelta(days=365)
_SPACES = re.compile(r"\s+")


@dataclass
class ProposedClaim:
    """A pending claim ready to persist."""

    claim_id: uuid.UUID
    task_id: uuid.UUID
    entity: str
    question: str
    statement: str
    confidence: float
    supports: list[Support]
    dropped_supports: int
    model: str
    decay_at: datetime
    failures: list[dict[str, str]] = field(default_factory=list)


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def verify_supports(outcome: DraftOutcome, evidence: list[EvidenceDoc]) -> tuple[list[Support], int]:
    """Keep supports whose source is known and whose quote occurs in that source's text."""
    by_id = {doc.source_id: doc for doc in evidence}
    kept: list[Support] = []
    dropped = 0
    seen: set[tuple[str, str]] = set()
    for support in outcome.draft.supports:
        doc = by_id.get(support.source_id)
        quote = support.quote.strip()
        if doc is None or not quote or _norm(quote) not in _norm(f"{doc.title} {doc.text}"):
            dropped += 1
            continue
        key = (support.source_id, _norm(quote))
        if key in seen:
            continue
        seen.add(key)
        kept.append(Support(source_id=support.source_id, title=doc.title, quote=quote, locator=support.locator))
    return kept, dropped


def to_claim(task: RunResearch, outcome: DraftOutcome, evidence: list[EvidenceDoc]) -> ProposedClaim:
    """The pending claim for `task`; its id derives from the task id, so a redelivery maps to it."""
    supports, dropped = verify_supports(outcome, evidence)
    confidence = outcome.draft.confidence if supports else 0.0
    return ProposedClaim(
        claim_id=uuid.uuid5(task.task_id, "claim"),
        task_id=task.task_id,
        entity=task.entity or "",
        question=task.question,
        statement=outcome.draft.statement.strip() or "No statement could be drawn from the evidence.",
        confidence=max(0.0, min(1.0, confidence)),
        supports=supports,
        dropped_supports=dropped,
        model=f"{outcome.provider}:{outcome.model}",
        decay_at=datetime.now(UTC) + CLAIM_LIFETIME,
        failures=[{"provider": f.provider, "model": f.model, "reason": f.reason} for f in outcome.failures],
    )
