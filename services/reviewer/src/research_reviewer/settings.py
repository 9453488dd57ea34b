"""The reviewer's settings group (`REVIEWER__…`) on top of the settings every process shares."""

from __future__ import annotations

from pydantic import BaseModel, Field

from research_platform.settings import Settings


class ReviewerSettings(BaseModel):
    """How hard the author searches, how the loop and the stale sweep run."""

    concurrency: int = Field(default=2, ge=1, description="Reviews fetched and worked on at once.")
    tool_timeout_s: float = Field(default=20.0, gt=0, description="Longest wait for one corpus tool answer.")
    passages_per_query: int = Field(default=8, ge=1, le=50, description="Papers taken from each evidence search.")
    findings_per_question: int = Field(default=2, ge=1, le=5, description="Key findings kept per sub-question.")
    spot_checks: int = Field(default=4, ge=3, le=5, description="Findings the peer reviewer re-finds by independent search.")
    llm_timeout_s: float = Field(default=60.0, gt=0, description="Longest wait for one LLM step (LLM engine only).")
    claim_days: int = Field(default=365, ge=1, description="A review's claims decay after this many days.")
    sweep_interval_s: float = Field(default=60.0, gt=0, description="How often the stale sweep looks at findings.")


class ReviewerServiceSettings(Settings):
    """The reviewer process's settings root."""

    reviewer: ReviewerSettings = Field(default_factory=ReviewerSettings)
