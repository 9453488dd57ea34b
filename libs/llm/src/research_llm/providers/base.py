"""What every provider offers: draft a claim from evidence, judge a claim against the ledger."""

from __future__ import annotations

from typing import Protocol

from research_contracts import CriticVerdict
from research_llm.schema import ClaimDraft, ClaimForReview, EvidenceDoc


class Provider(Protocol):
    """One model behind one API. Failures raise `research_llm.errors.ProviderError`."""

    name: str
    model: str
    critic_model: str  # the model that judges claims (the offline engine names its critic apart)

    async def draft_claim(self, question: str, entity: str | None, evidence: list[EvidenceDoc]) -> ClaimDraft: ...

    async def judge_claim(
        self, candidate: ClaimForReview, active: list[ClaimForReview], evidence: list[EvidenceDoc] | None
    ) -> CriticVerdict: ...
