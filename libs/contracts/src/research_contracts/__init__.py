"""research-engine message contracts, subject names and the gateway's response views
(`research_contracts.views`, shared with the client); nothing else lives here."""

from research_contracts import subjects
from research_contracts.messages import (
    ClaimDecided,
    ClaimProposed,
    ClaimStatus,
    ControlReply,
    ControlRequest,
    CriticVerdict,
    EvidenceFound,
    EvidenceRefreshed,
    RecritiqueClaim,
    RerunResearch,
    ResearchTask,
    RunResearch,
    SearchEvidence,
    SourceHit,
    SourcesRetracted,
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
    "EvidenceRefreshed",
    "RecritiqueClaim",
    "RerunResearch",
    "ResearchTask",
    "RunResearch",
    "SearchEvidence",
    "SourceHit",
    "SourcesRetracted",
    "Support",
    "TaskFilters",
    "Tier",
    "Verdict",
    "subjects",
]
