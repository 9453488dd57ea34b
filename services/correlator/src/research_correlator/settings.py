"""Correlator settings: the `correlator` group of the process settings (see research_platform.settings),
read from `CORRELATOR__<FIELD>` (e.g. `CORRELATOR__SCHEDULE__INTERVAL_S=3600`,
`CORRELATOR__MIN_SCORE=0.5`, `CORRELATOR__CLUSTERS_PER_RUN=200`)."""

from __future__ import annotations

from pydantic import Field, NonNegativeInt, PositiveFloat

from research_agents import ScheduleSettings
from research_platform.settings import Settings, SettingsGroup, Share


class CorrelatorSettings(SettingsGroup):
    """Which clusters a run looks at and how strong a pattern must be to become a finding."""

    schedule: ScheduleSettings = Field(default_factory=lambda: ScheduleSettings(interval_s=3600.0))
    clusters_per_run: NonNegativeInt = 200
    """Entity clusters per run (0 = all); the cursor carries over."""
    min_claims: int = Field(default=2, ge=2)
    """Active claims an entity needs to form a cluster."""
    max_claims_per_cluster: int = Field(default=50, ge=2)
    """Newest claims of a cluster looked at."""
    min_score: Share = 0.5
    """Weakest candidate a detector may propose."""
    confirm_timeout_s: PositiveFloat = 30.0
    """Deadline of the LLM confirmation."""


class CorrelatorServiceSettings(Settings):
    """The correlator process: the shared settings plus the `correlator` group (`CORRELATOR__<FIELD>`)."""

    correlator: CorrelatorSettings = Field(default_factory=CorrelatorSettings)
