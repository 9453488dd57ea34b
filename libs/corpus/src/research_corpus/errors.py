"""Errors of the local corpus.

ResearchEngineError            (research_platform.errors)
└── CorpusError                anything the corpus refuses or cannot do
    ├── MalformedRecordError   one input record cannot be read (carries its line number)
    └── EmbedderUnavailable    the bundled embedding model cannot be loaded
"""

from __future__ import annotations

from research_platform.errors import ResearchEngineError


class CorpusError(ResearchEngineError):
    """Base of every error the corpus library raises on purpose."""


class MalformedRecordError(CorpusError):
    """A record of an ingested file is not valid; `line` is 1-based (0 for a whole file)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}" if line else reason)
        self.line = line
        self.reason = reason


class EmbedderUnavailable(CorpusError):
    """The sentence-embedding model could not be loaded from its offline folder."""
