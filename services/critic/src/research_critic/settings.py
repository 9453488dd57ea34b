"""Critic settings: the `critic` group of the process settings (`CRITIC__<FIELD>`, e.g.
`CRITIC__SLA_SECONDS=30`, `CRITIC__QUARANTINE_AFTER=3`)."""

from __future__ import annotations

from pydantic import Field, PositiveInt

from research_platform.settings import Settings, SettingsGroup


class CriticSettings(SettingsGroup):
    """How the critic judges pending claims (`CRITIC__…`)."""

    sla_seconds: float = 30.0
    """Critique deadline of a claim."""
    quarantine_after: int = 3
    """Consecutive SLA timeouts before a claim is quarantined (keep MAX_DELIVER above it)."""
    concurrency: PositiveInt = 16
    """Pending claims judged at once."""


class CriticServiceSettings(Settings):
    """The critic process: the shared settings plus the `critic` group."""

    critic: CriticSettings = Field(default_factory=CriticSettings)
