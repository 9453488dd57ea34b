"""Critic settings: the `critic` group of the process settings (`CRITIC__<FIELD>`, e.g.
`CRITIC__SLA_SECONDS=30`, `CRITIC__QUARANTINE_AFTER=3`)."""

from __future__ import annotations

from pydantic import BaseModel, Field, PositiveInt

from research_platform.settings import Settings


class CriticSettings(BaseModel):
    """How the critic judges pending claims (`CRITIC__…`)."""

    sla_seconds: float = Field(default=30.0, description="Critique deadline of a claim.")
    quarantine_after: int = Field(
        default=3,
        description="Consecutive SLA timeouts before a claim is quarantined (keep MAX_DELIVER above it).",
    )
    concurrency: PositiveInt = Field(default=16, description="Pending claims judged at once.")


class CriticServiceSettings(Settings):
    """The critic process: the shared settings plus the `critic` group."""

    critic: CriticSettings = Field(default_factory=CriticSettings)
