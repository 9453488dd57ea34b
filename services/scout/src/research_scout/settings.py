"""Scout settings: the `scout` group of the process settings (`SCOUT__<FIELD>`, e.g.
`SCOUT__MAX_ITERATIONS=3`, `SCOUT__ENGINE=llm`, `SCOUT__RETENTION_VERSIONS=30`,
`SCOUT__SCHEDULE__INTERVAL_S=60`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt

from research_agents import ScheduleSettings
from research_platform.settings import Settings, SettingsGroup, Share


class ScoutSettings(SettingsGroup):
    """How the refinement loop searches, which engine judges, how long snapshots are kept."""

    engine: Literal["offline", "llm"] = "offline"
    """offline = deterministic extractive engine; llm = the provider chain (JSON schemas) judges
    hits and states facts, the offline engine answering when no model does."""
    judge: Literal["abstract", "chain"] = "abstract"
    """The offline judge: abstract = the abstract-level evidence model reads each hit whole (strong:
    evidence on the prompt; facts: the sentences it rests on); chain = the relevance cut,
    subject-naming rule and sentence-level evidence model of before (docs/benchmarks.md,
    bench:sourcelist, has the figures of both)."""
    partial_evidence: Share = 0.05
    """P(evidence on the prompt) (abstract judge) at which a hit without evidence is still listed,
    as partial, after the strong ones."""
    max_iterations: int = Field(default=3, ge=1, le=10)
    """The refinement loop's iteration cap."""
    per_source_limit: int = Field(default=20, ge=1, le=100)
    """Hits asked of each source per query."""
    deadline_s: PositiveFloat = 10.0
    """Per-source deadline of one connector search."""
    connector_timeout_s: PositiveFloat = 30.0
    """Longest wait for the connector's answer."""
    retention_versions: PositiveInt = 30
    """Snapshots kept per list (older ones deleted)."""
    llm_timeout_s: PositiveFloat = 30.0
    """Longest wait for one LLM step (LLM engine only)."""
    schedule: ScheduleSettings = Field(
        default_factory=lambda: ScheduleSettings(interval_s=60.0, first_tick_s=5.0)
    )
    """The tick that fires due source-list schedules."""


class ScoutServiceSettings(Settings):
    """The scout process: the shared settings plus the `scout` group."""

    scout: ScoutSettings = Field(default_factory=ScoutSettings)
