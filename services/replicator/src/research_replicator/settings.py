"""Replicator settings: the `replicator` group of the process settings (see research_platform.settings),
read from `REPLICATOR__<FIELD>` (e.g. `REPLICATOR__MIN_AGE_DAYS=30`,
`REPLICATOR__SCHEDULE__INTERVAL_S=3600`, `REPLICATOR__EROSION_THRESHOLD=0.5`)."""

from __future__ import annotations

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from research_agents import ScheduleSettings
from research_platform.settings import Settings, SettingsGroup, Share


class ReplicatorSettings(SettingsGroup):
    """Which claims are due for re-running and when the fresh evidence counts as eroded."""

    schedule: ScheduleSettings = Field(default_factory=lambda: ScheduleSettings(interval_s=3600.0))
    min_age_days: NonNegativeFloat = 30.0
    """Active claims older than this are re-run."""
    recheck_days: NonNegativeFloat = 30.0
    """A claim re-checked this recently is not due again."""
    claims_per_run: PositiveInt = 20
    """Claims re-run per run (each one is a full research call)."""
    rerun_timeout_s: PositiveFloat = 60.0
    """Deadline of one researcher re-run."""
    erosion_threshold: Share = 0.5
    """When no fresh source takes a stance: below this share of old supports
    still found → eroded."""
    judged_sources: int = Field(default=6, ge=1, le=50)
    """Fresh hits the stance model judges per claim (the claim's own sources first)."""
    sources: list[str] = Field(default_factory=list)
    """Evidence sources (empty = the researcher's default)."""
    limit: int = Field(default=20, ge=1, le=200)
    """Hits asked for per re-run."""
    watched_per_run: int = Field(default=50, ge=0, le=1000)
    """Due watched claims sent for re-verification per run (and per dispatcher tick)."""
    watched_in_flight: int = Field(default=4, ge=1, le=1000)
    """Most watched-claim re-verifications asked for and unfinished at once; the rest wait in the
    ledger (a retraction wave is worked off at the verifier's pace)."""
    watched_tick_s: PositiveFloat = 5.0
    """How often the dispatcher tops the re-verifications in flight up to `watched_in_flight`."""
    watched_spread: Share = 0.5
    """Share of its interval a watched claim may be asked for early, at a place fixed by its id:
    claims entered together are spread over the interval's last part."""
    recritique_in_flight: int = Field(default=8, ge=1, le=1000)
    """Most re-critiques a retraction asked for that are on the critic's queue and not yet judged;
    the rest wait in the ledger (a wave of thousands is worked off at the critic's pace)."""
    recritique_tick_s: PositiveFloat = 2.0
    """How often held re-critiques are released up to `recritique_in_flight` (with or
    without the schedule)."""


class ReplicatorServiceSettings(Settings):
    """The replicator process: the shared settings plus the `replicator` group (`REPLICATOR__<FIELD>`)."""

    replicator: ReplicatorSettings = Field(default_factory=ReplicatorSettings)
