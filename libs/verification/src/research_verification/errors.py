"""Errors of research_verification.

VerificationError        a ResearchEngineError (research_contracts.errors)
└── ClaimParseError      a claim with no testable statement (empty, or no words at all)
"""

from __future__ import annotations

from research_contracts.errors import ResearchEngineError


class VerificationError(ResearchEngineError):
    """Base of every error this lib raises."""


class ClaimParseError(VerificationError, ValueError):
    """The claim holds nothing to test; callers turn this into a 422 with the message."""
