"""What the mode services (reviewer, verifier, scout) stand on; the researcher uses the same search client.

- `connector`: `ConnectorClient` (corpus tools + `research.connector.search`, a missing responder
  waited for with back-off), `ToolsUnavailable`, `SourcesDown`, `SourceLog`;
- `runs`: `mode_run` (recorder + failure wiring), `WatchedPort` (searches noted per run),
  `audit_sources`;
- `engines`: `remote_configured` / `choose` (remote LLM or the offline engine);
- `app`: `mode_app` (broker, delivery, lifespan, request subscriber).
"""

from research_modes.connector import ConnectorClient, SourceLog, SourcesDown, ToolsUnavailable
from research_modes.engines import choose, remote_configured
from research_modes.runs import ConnectorPort, ModeRun, WatchedPort, audit_sources, mode_run, tell

__all__ = [
    "ConnectorClient",
    "ConnectorPort",
    "ModeRun",
    "SourceLog",
    "SourcesDown",
    "ToolsUnavailable",
    "WatchedPort",
    "audit_sources",
    "choose",
    "mode_run",
    "remote_configured",
    "tell",
]
