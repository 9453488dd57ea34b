"""Errors of the modes' shared pieces (the connector client).

ResearchEngineError (research_contracts.errors)
├── TransientError (research_platform.errors)
│   └── ToolsUnavailable    a corpus tool did not answer: the command is redelivered
└── SourcesDown             every source a run asked failed: the run ends `failed`
"""

from __future__ import annotations

from research_platform.errors import ResearchEngineError, TransientError


class ToolsUnavailable(TransientError):
    """A corpus tool did not answer (or refused): the run is tried again later."""


class SourcesDown(ResearchEngineError):
    """Every source a run asked failed: the run ends `failed` with this reason (retrying now will not help)."""
