"""The offline critic: promote, supersede or reject a pending claim by evidence strength,
similarity to the active claims of its entity and polarity cues.

Strength of a claim (0..1) mixes how much of its statement its quotes cover, how many sources
back it, its stated confidence and — when the evidence is at hand — the share of its quotes
that really occur in the cited text. A candidate is rejected when it is weakly supported or
not grounded, or when a better-supported active claim on the same point contradicts or
already states it. It supersedes the overlapping active claims it is better supported than,
and is promoted otherwise. The verdict's score is the candidate's strength.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from research_contracts import CriticVerdict, Verdict
from research_llm.offline import lexicon
from research_llm.offline.relevance import Relevance
from research_llm.schema import ClaimForReview, EvidenceDoc

MODEL = "offline-critic-v1"


@dataclass(frozen=True, slots=True)
class Strength:
    value: float
    coverage: float
    sources: int
    grounded: float | None


class OfflineCritic:
    """Judges a candidate claim against the active claims of the same entity."""

    def __init__(
        self,
        relevance: Relevance,
        *,
        min_strength: float = 0.35,
        min_coverage: float = 0.3,
        min_grounded: float = 0.5,
        overlap: float | None = None,
        duplicate: float | None = None,
        margin: float = 0.02,
    ) -> None:
        self.relevance = relevance
        self.min_strength = min_strength
        self.min_coverage = min_coverage
        self.min_grounded = min_grounded
        # Cosine similarity of related statements sits higher than term overlap does.
        hybrid = relevance.mode == "hybrid"
        self.overlap = overlap if overlap is not None else (0.45 if hybrid else 0.35)
        self.duplicate = duplicate if duplicate is not None else (0.85 if hybrid else 0.8)
        self.margin = margin

    def judge(
        self,
        candidate: ClaimForReview,
        active: list[ClaimForReview],
        evidence: list[EvidenceDoc] | None,
    ) -> CriticVerdict:
        mine = self.strength(candidate, evidence)
        weak = self._weakness(candidate, mine)
        if weak:
            return self._verdict(Verdict.reject, mine, weak)
        peers = [
            a
            for a in active
            if a.claim_id != candidate.claim_id
            and a.entity.casefold() == candidate.entity.casefold()
        ]
        overlapping = []
        for peer in sorted(peers, key=lambda p: str(p.claim_id)):
            similarity = self.relevance.similarity(candidate.statement, peer.statement)
            if similarity >= self.overlap:
                overlapping.append((peer, similarity, self.strength(peer, None)))
        better_or_equal = [
            (p, s, st) for p, s, st in overlapping if st.value + self.margin >= mine.value
        ]
        for peer, similarity, theirs in better_or_equal:
            if lexicon.contradicts(candidate.statement, peer.statement):
                return self._verdict(
                    Verdict.reject,
                    mine,
                    f"contradicts active claim {peer.claim_id} (similarity {similarity:.2f}), which is at least as "
                    f"well supported ({theirs.value:.2f} vs {mine.value:.2f})",
                )
            if similarity >= self.duplicate:
                return self._verdict(
                    Verdict.reject,
                    mine,
                    f"restates active claim {peer.claim_id} (similarity {similarity:.2f}) without better support "
                    f"({mine.value:.2f} vs {theirs.value:.2f})",
                )
        replaced = [(p, s, st) for p, s, st in overlapping if mine.value > st.value + self.margin]
        if replaced:
            parts = ", ".join(
                f"{p.claim_id} (similarity {s:.2f}, strength {st.value:.2f}"
                + (
                    ", contradicted"
                    if lexicon.contradicts(candidate.statement, p.statement)
                    else ""
                )
                + ")"
                for p, s, st in replaced
            )
            return self._verdict(
                Verdict.supersede,
                mine,
                f"better supported ({mine.value:.2f}) than overlapping active claims: {parts}",
                supersedes=[p.claim_id for p, _, _ in replaced],
            )
        note = f"; complements {len(overlapping)} related active claim(s)" if overlapping else ""
        return self._verdict(
            Verdict.promote,
            mine,
            f"grounded in {mine.sources} source(s), quote coverage {mine.coverage:.2f}{note}",
        )

    def strength(self, claim: ClaimForReview, evidence: list[EvidenceDoc] | None) -> Strength:
        """How well a claim's own supports back its statement (0..1)."""
        sources = len({s.source_id for s in claim.supports})
        quotes = " ".join(s.quote for s in claim.supports)
        coverage = _coverage(claim.statement, quotes)
        grounded = _grounded_share(claim, evidence) if evidence is not None else None
        value = (
            0.35 * coverage
            + 0.25 * min(1.0, sources / 3.0)
            + 0.25 * claim.confidence
            + 0.15 * (grounded if grounded is not None else 1.0)
        )
        if not claim.supports:
            value = 0.0
        return Strength(
            value=round(value, 4), coverage=round(coverage, 4), sources=sources, grounded=grounded
        )

    def _weakness(self, claim: ClaimForReview, mine: Strength) -> str | None:
        if not claim.supports:
            return "no supporting evidence"
        if mine.grounded is not None and mine.grounded < self.min_grounded:
            return f"not grounded: only {mine.grounded:.0%} of quotes occur in the cited sources"
        if mine.coverage < self.min_coverage:
            return f"statement not grounded in its quotes (coverage {mine.coverage:.2f})"
        if mine.value < self.min_strength:
            return f"weak evidence (strength {mine.value:.2f} < {self.min_strength:.2f})"
        return None

    @staticmethod
    def _verdict(
        verdict: Verdict, mine: Strength, reasoning: str, supersedes: list[uuid.UUID] | None = None
    ) -> CriticVerdict:
        return CriticVerdict(
            verdict=verdict,
            score=min(1.0, max(0.0, mine.value)),
            reasoning=f"{verdict.value}: {reasoning}",
            supersedes=supersedes or [],
            model=MODEL,
        )


def _coverage(statement: str, quotes: str) -> float:
    terms = set(lexicon.content_terms(statement))
    if not terms:
        return 0.0
    quoted = set(lexicon.content_terms(quotes))
    return len(terms & quoted) / len(terms)


def _grounded_share(claim: ClaimForReview, evidence: list[EvidenceDoc]) -> float:
    texts = {doc.source_id: doc.text for doc in evidence}
    if not claim.supports:
        return 0.0
    ok = sum(1 for s in claim.supports if s.source_id in texts and s.quote in texts[s.source_id])
    return ok / len(claim.supports)
