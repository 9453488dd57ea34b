"""Errors of the local corpus.

ResearchEngineError            (research_platform.errors)
└── CorpusError                anything the corpus refuses or cannot do
    ├── MalformedRecordError   one input record cannot be read (carries its line number)
    ├── EmbedderUnavailable    the bundled embedding model cannot be loaded
    └── EmbeddingModelMismatch the corpus's vectors come from another model/precision
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


class EmbeddingModelMismatch(CorpusError):
    """The corpus's vectors were made by another model or precision than the running embedder's
    (or are being re-embedded): comparing them would mix two vector spaces."""

    def __init__(self, stored: str, running: str, reembedding_to: str | None = None) -> None:
        if reembedding_to:
            reason = (
                f"the corpus is being re-embedded from {stored} to {reembedding_to} (its vectors "
                f"are mixed until `research-engine corpus reembed` finishes); this process embeds "
                f"with {running}"
            )
        else:
            reason = (
                f"the corpus was embedded with {stored} but this process embeds with {running}: "
                f"run `research-engine corpus reembed` (converts the corpus to {running}) or set "
                f"CORPUS__EMBED_PRECISION={stored.rsplit('/', 1)[-1]}"
            )
        super().__init__(reason)
        self.stored = stored
        self.running = running
        self.reembedding_to = reembedding_to
