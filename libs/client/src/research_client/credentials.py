"""Where the client finds the gateway URL and the API key, first match wins.

URL: the `url` argument → `RESEARCH_URL` → the config file's `url` → `http://127.0.0.1:8080`.
Key: the `api_key` argument → `RESEARCH_API_KEY` → the config file's `api_key` → the local admin
key `research-engine up` keeps in its data folder (`<DATA_DIR or .research-engine>/admin.key`).

The config file is TOML at `RESEARCH_CONFIG` or `~/.config/research-engine/config.toml`:

    url = "https://research.example.org"
    api_key = "rek_…"

Keep it readable by its owner only (`chmod 600`): it holds a key.

`exposure(credentials)` says when sending the key to the URL would give it away: plain `http://`
to another machine, or the local admin key to anything but this machine's gateway.
"""

from __future__ import annotations

import ipaddress
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from research_client.settings import ClientSettings

DEFAULT_URL = "http://127.0.0.1:8080"
LOCAL_KEY_FILE = "admin.key"  # written by `research-engine up` (research_engine.local_key)
LOCAL_KEY_SOURCE = (
    "local key"  # how `Credentials.key_from` names the local admin key (then its path)
)


def config_path() -> Path:
    settings = ClientSettings()
    if settings.research_config:
        return Path(settings.research_config).expanduser()
    base = Path(settings.xdg_config_home or Path.home() / ".config")
    return base / "research-engine" / "config.toml"


def read_config(path: Path | None = None) -> dict[str, str]:
    """The config file's string settings ({} when there is none)."""
    path = path or config_path()
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        loaded = tomllib.load(handle)
    return {k: str(v) for k, v in loaded.items() if isinstance(v, str | int | float)}


def local_key(data_dir: Path | None = None) -> str | None:
    """The local admin key of the embedded stack's data folder, when there is one."""
    folder = data_dir or Path(ClientSettings().data_dir)
    path = folder / LOCAL_KEY_FILE
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


@dataclass(frozen=True)
class Credentials:
    url: str
    api_key: str | None
    key_from: str  # where the key came from (never the key): shown by the CLI when a call gets 401


def resolve(
    url: str | None = None, api_key: str | None = None, *, data_dir: Path | None = None
) -> Credentials:
    """The gateway URL and key to use (see module doc for the order)."""
    settings = ClientSettings()
    config = read_config()
    found_url = url or settings.research_url or config.get("url") or DEFAULT_URL
    env_key = settings.research_api_key.get_secret_value() if settings.research_api_key else None
    candidates = (
        ("argument", api_key),
        ("RESEARCH_API_KEY", env_key),
        (f"config file {config_path()}", config.get("api_key")),
        (
            f"{LOCAL_KEY_SOURCE} {(data_dir or Path(settings.data_dir)) / LOCAL_KEY_FILE}",
            local_key(data_dir),
        ),
    )
    for source, key in candidates:
        if key:
            return Credentials(found_url.rstrip("/"), key, source)
    return Credentials(found_url.rstrip("/"), None, "none")


def is_loopback_url(url: str) -> bool:
    """Whether `url` names this machine (`localhost`, 127.0.0.0/8, ::1)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure(credentials: Credentials) -> str | None:
    """Why sending `credentials.api_key` to `credentials.url` would give the key away, or None."""
    parts = urlsplit(credentials.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (
            f"the gateway URL must be http(s)://host[:port] (got scheme {parts.scheme or 'none'!r})"
        )
    if is_loopback_url(credentials.url):
        return None
    if parts.scheme != "https":
        return (
            f"refusing to send an API key to {parts.hostname} over plain http: use https:// "
            "(TLS), or a loopback address for a gateway on this machine"
        )
    if credentials.key_from.startswith(LOCAL_KEY_SOURCE):
        return (
            f"the local admin key of `research-engine up` is for this machine's gateway only, not "
            f"{parts.hostname}: set RESEARCH_API_KEY (or the config file's api_key) to a key of that gateway"
        )
    return None
