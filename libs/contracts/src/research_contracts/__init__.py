"""research-engine message contracts and subject names (nothing else lives here)."""

from research_contracts import subjects
from research_contracts.messages import (
    ClaimDecided,
    ClaimProposed,
    ClaimStatus,
    ControlReply,
    ControlRequest,
    CriticVerdict,
    EvidenceFound,
    RecritiqueClaim,
    ResearchTask,
    RunResearch,
    SearchEvidence,
    SourceHit,
    Support,
    TaskFilters,
    Tier,
    Verdict,
)

__all__ = [
    "ClaimDecided",
    "ClaimProposed",
    "ClaimStatus",
    "ControlReply",
    "ControlRequest",
    "CriticVerdict",
    "EvidenceFound",
    "RecritiqueClaim",
    "ResearchTask",
    "RunResearch",
    "SearchEvidence",
    "SourceHit",
    "Support",
    "TaskFilters",
    "Tier",
    "Verdict",
    "subjects",
]
