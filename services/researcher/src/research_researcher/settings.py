"""Researcher settings: the `researcher` group of the process settings (`RESEARCHER__<FIELD>`,
e.g. `RESEARCHER__EVIDENCE_LIMIT=8`, `RESEARCHER__CONCURRENCY=16`)."""

from __future__ import annotations

from pydantic import Field, PositiveInt

from research_platform.settings import Settings, SettingsGroup


class ResearcherSettings(SettingsGroup):
    """How the researcher gathers evidence for a task (`RESEARCHER__…`)."""

    evidence_sources: list[str] = Field(default_factory=lambda: ["corpus"])
    """Sources asked for evidence."""
    evidence_limit: int = 8
    """Hits asked of the evidence sources per task."""
    connector_timeout_s: float = 15.0
    """Longest wait for the connector's answer."""
    concurrency: PositiveInt = 16
    """Tasks of one tier worked on at once, a new one started as one ends (their questions
    share embedding batches)."""
    fallback_sources: list[str] = Field(default_factory=lambda: ["pubmed"])
    """Sources asked when memory retrieval fails."""
    memory_claims: int = 5
    """Related active claims recalled per task."""
    memory_min_similarity: float = 0.45
    """Cosine similarity a related claim needs."""
    memory_sources: int = 5
    """Known sources (cited by related claims) added as evidence."""
    memory_timeout_s: float = 5.0
    """Longest memory retrieval before the fallback."""
    tier_poll_s: float = 0.25
    """How often a lower tier re-checks higher tiers' backlog."""


class ResearcherServiceSettings(Settings):
    """The researcher process: the shared settings plus the `researcher` group."""

    researcher: ResearcherSettings = Field(default_factory=ResearcherSettings)
