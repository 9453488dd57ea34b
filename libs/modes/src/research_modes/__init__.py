"""What the mode services (reviewer, verifier, scout) stand on; the researcher uses the same search client.

- `connector`: `ConnectorClient` (corpus tools + `research.connector.search`, a missing responder
  waited for with back-off), `ToolsUnavailable`, `SourcesDown`, `SourceLog`;
- `runs`: `mode_run` (recorder + failure wiring), `runs_now` (a command for the report's current
  run), `WatchedPort` (searches noted per run), `audit_sources`;
- `app`: `mode_app`, the one wiring of a mode service (`research_platform.app.service_app` with
  run events, the ledger's dead letters and its request subscriber).

A mode chooses its engine by asking its `research_llm.LlmPolicy`.
"""

from research_modes.connector import ConnectorClient, SourceLog
from research_modes.errors import SourcesDown, ToolsUnavailable
from research_modes.runs import (
    ConnectorPort,
    ModeRun,
    WatchedPort,
    audit_sources,
    mode_run,
    runs_now,
    tell,
)

__all__ = [
    "ConnectorClient",
    "ConnectorPort",
    "ModeRun",
    "SourceLog",
    "SourcesDown",
    "ToolsUnavailable",
    "WatchedPort",
    "audit_sources",
    "mode_run",
    "runs_now",
    "tell",
]
