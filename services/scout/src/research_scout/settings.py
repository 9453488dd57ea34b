"""Scout settings: the `scout` group of the process settings (`SCOUT__<FIELD>`, e.g.
`SCOUT__MAX_ITERATIONS=3`, `SCOUT__ENGINE=llm`, `SCOUT__RETENTION_VERSIONS=30`,
`SCOUT__SCHEDULE__INTERVAL_S=60`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, PositiveFloat, PositiveInt

from research_agents import ScheduleSettings
from research_platform.settings import Settings, Share


class ScoutSettings(BaseModel):
    """How the refinement loop searches, which engine judges, how long snapshots are kept."""

    engine: Literal["offline", "llm"] = Field(
        default="offline",
        description="offline = deterministic extractive engine; llm = the provider chain "
        "(JSON schemas) judges hits and states facts, the offline engine answering when no model does.",
    )
    judge: Literal["abstract", "chain"] = Field(
        default="abstract",
        description="The offline judge: abstract = the abstract-level evidence model reads each hit whole "
        "(strong: evidence on the prompt; facts: the sentences it rests on); chain = the relevance cut, subject-naming rule "
        "and sentence-level evidence model of before (docs/benchmarks.md, bench:sourcelist, has the figures of both).",
    )
    partial_evidence: Share = Field(
        default=0.05,
        description="P(evidence on the prompt) (abstract judge) at which a hit without "
        "evidence is still listed, as partial, after the strong ones.",
    )
    max_iterations: int = Field(
        default=3, ge=1, le=10, description="The refinement loop's iteration cap."
    )
    per_source_limit: int = Field(
        default=20, ge=1, le=100, description="Hits asked of each source per query."
    )
    deadline_s: PositiveFloat = Field(
        default=10.0, description="Per-source deadline of one connector search."
    )
    connector_timeout_s: PositiveFloat = Field(
        default=30.0, description="Longest wait for the connector's answer."
    )
    retention_versions: PositiveInt = Field(
        default=30, description="Snapshots kept per list (older ones deleted)."
    )
    llm_timeout_s: PositiveFloat = Field(
        default=30.0, description="Longest wait for one LLM step (LLM engine only)."
    )
    schedule: ScheduleSettings = Field(
        default_factory=lambda: ScheduleSettings(interval_s=60.0, first_tick_s=5.0),
        description="The tick that fires due source-list schedules.",
    )


class ScoutServiceSettings(Settings):
    """The scout process: the shared settings plus the `scout` group."""

    scout: ScoutSettings = Field(default_factory=ScoutSettings)
