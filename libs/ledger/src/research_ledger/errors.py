"""Errors of the ledger library.

    TransientError (research_platform.errors)
    └── EntityChanged     the entity's active claims changed between judging a claim and
                          applying the verdict: judge it again (the message is retried)
"""

from __future__ import annotations

from research_platform.errors import TransientError


class EntityChanged(TransientError):
    """The entity's active claims changed between judging a claim and applying the verdict."""
