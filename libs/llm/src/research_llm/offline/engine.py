"""The `offline` provider: deterministic, no network, the default when no key is set.

CPU work (sentence scoring, the embedder) runs in a worker thread so the event loop keeps
serving heartbeats while a claim is drafted.
"""

from __future__ import annotations

import asyncio

from research_contracts import CriticVerdict
from research_llm.offline import critique, drafting
from research_llm.offline.relevance import Relevance, TextEncoder, default_encoder
from research_llm.schema import ClaimDraft, ClaimForReview, EvidenceDoc

_USE_DEFAULT = object()


class OfflineProvider:
    """Extractive researcher + cue-based critic; `model` names the drafting engine."""

    name = "offline"
    model = drafting.MODEL
    critic_model = critique.MODEL

    def __init__(
        self, encoder: TextEncoder | object | None = _USE_DEFAULT, *, max_supports: int = 5
    ) -> None:
        self._encoder = encoder
        self._max_supports = max_supports
        self._relevance: Relevance | None = None

    def relevance(self) -> Relevance:
        """The hybrid scorer, built on first use (loading the embedder can take seconds)."""
        if self._relevance is None:
            encoder = default_encoder() if self._encoder is _USE_DEFAULT else self._encoder
            self._relevance = Relevance(encoder)  # type: ignore[arg-type]  # the _USE_DEFAULT sentinel is replaced above
        return self._relevance

    def draft_sync(
        self, question: str, entity: str | None, evidence: list[EvidenceDoc]
    ) -> ClaimDraft:
        drafter = drafting.ExtractiveDrafter(self.relevance(), max_supports=self._max_supports)
        return drafter.draft(question, entity, evidence)

    def judge_sync(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None,
    ) -> CriticVerdict:
        return critique.OfflineCritic(self.relevance()).judge(candidate, active, evidence)

    async def draft_claim(
        self, question: str, entity: str | None, evidence: list[EvidenceDoc]
    ) -> ClaimDraft:
        return await asyncio.to_thread(self.draft_sync, question, entity, evidence)

    async def judge_claim(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None,
    ) -> CriticVerdict:
        return await asyncio.to_thread(self.judge_sync, candidate, active, evidence)
