"""Errors of the ledger library.

ResearchEngineError (research_contracts.errors), ValueError
└── AuditPayloadError an audit row's payload does not match the catalogue's schema for its
                      action (a programming error: the row is not written)
TransientError (research_platform.errors)
└── EntityChanged     the entity's active claims changed between judging a claim and
                      applying the verdict: judge it again (the message is retried)
PrepareError (research_platform.errors)
└── RunTaken          a command names a run that belongs to another report: a run is
                      never joined by a second one (the message is dead-lettered)
"""

from __future__ import annotations

from research_platform.errors import PrepareError, ResearchEngineError, TransientError


class AuditPayloadError(ResearchEngineError, ValueError):
    """A payload does not match the catalogue's schema for its action."""


class EntityChanged(TransientError):
    """The entity's active claims changed between judging a claim and applying the verdict."""


class RunTaken(PrepareError):
    """The command's run id names a run of another report; its events are not the command's to write."""
