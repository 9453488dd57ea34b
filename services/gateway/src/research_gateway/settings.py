"""Gateway settings: the shared root plus the console's group (`GATEWAY_CONSOLE__<FIELD>`, e.g.
`GATEWAY_CONSOLE__GRAFANA_URL=https://grafana.example.org`) and the edge's limits
(`GATEWAY_EDGE__<FIELD>`, e.g. `GATEWAY_EDGE__MAX_BODY_BYTES=2097152`)."""

from __future__ import annotations

from pydantic import Field, PositiveFloat, PositiveInt, field_validator

from research_platform.settings import Settings, SettingsGroup


class ConsoleSettings(SettingsGroup):
    """What the web console links to outside the gateway."""

    grafana_url: str = Field(default="", pattern=r"^(https?://\S+)?$")
    """Base URL of Grafana; the Operate page links its dashboards as `<grafana_url>/d/<uid>`. Empty
    (the default): no dashboard links are shown."""

    @field_validator("grafana_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")


class EdgeSettings(SettingsGroup):
    """What one request may cost the gateway before any route runs (`limits.py`)."""

    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    """Largest request body, in bytes, on every route (`/sign-in` and `/mcp` included); a
    larger one is answered 413 before it is read (by `Content-Length`, or counted as a
    chunked body streams in)."""
    streams_per_key: PositiveInt = 8
    """Event streams (`/events`, `/runs/{run_id}/events`) one key may hold open at once, per gateway
    process; one more is answered 429 with `Retry-After`."""
    stream_max_s: PositiveFloat = 900.0
    """Seconds an event stream stays open; it then ends with a `retry:` hint and the client
    reconnects (run streams resume after `Last-Event-ID`), its key checked again."""
    export_timeout_s: PositiveFloat = 30.0
    """Seconds a report export (PDF above all) may take, rendered in a worker thread off the event
    loop; past it the export is answered 503."""


class GatewaySettings(Settings):
    """The gateway process's settings."""

    gateway_console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    gateway_edge: EdgeSettings = Field(default_factory=EdgeSettings)
