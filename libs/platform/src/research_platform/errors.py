"""Errors of the platform and of every agent built on it; the root, `ResearchEngineError`, lives in
`research_contracts.errors` and is re-exported here.

ResearchEngineError
├── PrepareError           bad input: the message is terminated to the dead-letter subject
│                          with an audit row and never retried
├── TransientError         a fault that may pass (database down, connector timeout): the
│                          message is nacked with a delay and redelivered
└── EmbeddedServerError    an embedded server (nats-server, PostgreSQL) could not be started
                           (also a RuntimeError)
"""

from __future__ import annotations

from research_contracts.errors import ResearchEngineError

__all__ = ["EmbeddedServerError", "PrepareError", "ResearchEngineError", "TransientError"]


class PrepareError(ResearchEngineError):
    """The input cannot be processed as it is; retrying will not help."""


class TransientError(ResearchEngineError):
    """The work failed for a reason that may pass; retry later."""


class EmbeddedServerError(ResearchEngineError, RuntimeError):
    """An embedded server could not be started."""
