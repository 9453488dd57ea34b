"""The researcher's work: turn a question and its evidence into a drafted claim (no DB, no broker)."""

from __future__ import annotations

from research_contracts import RunResearch, SourceHit
from research_llm import DraftOutcome, EvidenceDoc


def evidence_docs(hits: list[SourceHit]) -> list[EvidenceDoc]:
    """The evidence the model sees: title + text of each hit, keyed by its source id."""
    docs: dict[str, EvidenceDoc] = {}
    for hit in hits:
        text = hit.abstract or str(hit.metadata.get("passage") or "")
        if not text.strip() or hit.source_id in docs:
            continue
        docs[hit.source_id] = EvidenceDoc(
            source_id=hit.source_id, title=hit.title, text=text, year=hit.year, score=hit.score, metadata=hit.metadata
        )
    return list(docs.values())


async def draft_claim(task: RunResearch, evidence: list[EvidenceDoc], chain) -> DraftOutcome:  # type: ignore[no-untyped-def]
    """Ask the provider chain (OpenAI → Gemini → offline) to state one claim with citations."""
    return await chain.draft_claim(task.question, task.entity, evidence)
