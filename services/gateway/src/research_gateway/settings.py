"""Gateway settings: the shared root plus the console's group (`GATEWAY_CONSOLE__<FIELD>`, e.g.
`GATEWAY_CONSOLE__GRAFANA_URL=https://grafana.example.org`)."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from research_platform.settings import Settings


class ConsoleSettings(BaseModel):
    """What the web console links to outside the gateway."""

    grafana_url: str = Field(
        default="",
        pattern=r"^(https?://\S+)?$",
        description="Base URL of Grafana; the Operate page links its dashboards as `<grafana_url>/d/<uid>`. "
        "Empty (the default): no dashboard links are shown.",
    )

    @field_validator("grafana_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")


class GatewaySettings(Settings):
    """The gateway process's settings."""

    gateway_console: ConsoleSettings = Field(default_factory=ConsoleSettings)
