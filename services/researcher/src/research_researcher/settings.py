"""Researcher settings: the `researcher` group of the process settings (`RESEARCHER__<FIELD>`,
e.g. `RESEARCHER__EVIDENCE_LIMIT=8`, `RESEARCHER__CONCURRENCY=16`)."""

from __future__ import annotations

from pydantic import BaseModel, Field, PositiveInt

from research_platform.settings import Settings


class ResearcherSettings(BaseModel):
    """How the researcher gathers evidence for a task (`RESEARCHER__…`)."""

    evidence_sources: list[str] = Field(
        default_factory=lambda: ["corpus"], description="Sources asked for evidence."
    )
    evidence_limit: int = Field(
        default=8, description="Hits asked of the evidence sources per task."
    )
    connector_timeout_s: float = Field(
        default=15.0, description="Longest wait for the connector's answer."
    )
    concurrency: PositiveInt = Field(
        default=16,
        description="Tasks of one tier worked on at once, a new one started as one ends (their questions share embedding batches).",
    )
    fallback_sources: list[str] = Field(
        default_factory=lambda: ["pubmed"], description="Sources asked when memory retrieval fails."
    )
    memory_claims: int = Field(default=5, description="Related active claims recalled per task.")
    memory_min_similarity: float = Field(
        default=0.45, description="Cosine similarity a related claim needs."
    )
    memory_sources: int = Field(
        default=5, description="Known sources (cited by related claims) added as evidence."
    )
    memory_timeout_s: float = Field(
        default=5.0, description="Longest memory retrieval before the fallback."
    )
    tier_poll_s: float = Field(
        default=0.25, description="How often a lower tier re-checks higher tiers' backlog."
    )


class ResearcherServiceSettings(Settings):
    """The researcher process: the shared settings plus the `researcher` group."""

    researcher: ResearcherSettings = Field(default_factory=ResearcherSettings)
