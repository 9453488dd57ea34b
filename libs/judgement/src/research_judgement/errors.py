"""Errors of the trained judgement.

JudgementError               a ResearchEngineError (research_contracts.errors)
└── WeightsUnavailable       the shipped adapter / head files are missing (also a RuntimeError)
"""

from __future__ import annotations

from research_contracts.errors import ResearchEngineError


class JudgementError(ResearchEngineError):
    """Base of the errors research_judgement raises on purpose."""


class WeightsUnavailable(JudgementError, RuntimeError):
    """The shipped adapter / head files are missing."""
