"""What the client reads from the environment (this library does not depend on the server's
`research_platform.settings`; the names are the ones documented in docs/configuration.md).

Read from the process environment only, no `.env` file: a notebook's working folder is not the
client's configuration. Each call of `credentials.resolve` reads them afresh.
"""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ClientSettings(BaseSettings):
    """The gateway the client talks to, the key it sends, and where it looks for them."""

    model_config = SettingsConfigDict(extra="ignore", use_attribute_docstrings=True)

    research_url: str | None = None
    """Gateway URL; unset = the config file's `url`, else http://127.0.0.1:8080."""
    research_api_key: SecretStr | None = None
    """API key sent to the gateway; unset = the config file's `api_key`, else the local admin key of
    `research-engine up`."""
    research_config: str | None = None
    """The client's TOML config file; unset = `research-engine/config.toml` in
    XDG_CONFIG_HOME, else in ~/.config."""
    xdg_config_home: str | None = None
    """The user's configuration folder (XDG), for the config file."""
    data_dir: str = ".research-engine"
    """Data folder of `research-engine up`, where the local admin key is kept."""
