"""LLM providers behind one chain (OpenAI → Gemini → offline) with schema-validated output.

from research_llm import EvidenceDoc, build_chain
chain = build_chain(settings.llm)
outcome = await chain.draft_claim(question, entity, evidence)   # DraftOutcome
judged = await chain.judge_claim(candidate, active, evidence)   # JudgeOutcome
policy = LlmPolicy(settings.llm)                                # what a service asks: order, budget
engine = policy.choose(remote=..., offline=...)                 # the modes' engine choice
"""

from research_llm.chain import ProviderChain, build_chain
from research_llm.engines import EngineChoice, choose_engine, remote_configured
from research_llm.errors import (
    InvalidResponse,
    LLMError,
    NoProviderAnswered,
    ProviderError,
    ProviderUnavailable,
)
from research_llm.grounding import GroundedSupports, ground_supports
from research_llm.offline.engine import OfflineProvider
from research_llm.policy import LlmPolicy
from research_llm.schema import (
    ClaimDraft,
    ClaimForReview,
    DraftOutcome,
    EvidenceDoc,
    JudgeOutcome,
    ProviderFailure,
    SupportDraft,
    VerdictDraft,
)

__all__ = [
    "ClaimDraft",
    "ClaimForReview",
    "DraftOutcome",
    "EngineChoice",
    "EvidenceDoc",
    "GroundedSupports",
    "InvalidResponse",
    "JudgeOutcome",
    "LLMError",
    "LlmPolicy",
    "NoProviderAnswered",
    "OfflineProvider",
    "ProviderChain",
    "ProviderError",
    "ProviderFailure",
    "ProviderUnavailable",
    "SupportDraft",
    "VerdictDraft",
    "build_chain",
    "choose_engine",
    "ground_supports",
    "remote_configured",
]
