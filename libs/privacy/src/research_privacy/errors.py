"""Errors of the privacy guards.

UncleanText (a ValueError)    text that still holds an identifier reached a writer

Not under `ResearchEngineError`: research_contracts, where the root lives, stands on this library
(its person-typed fields are de-identified when parsed), and a ValueError raised in a pydantic
validator is reported as that field's validation error.
"""

from __future__ import annotations


class UncleanText(ValueError):
    """Text that still holds an identifier reached a writer: it did not pass the boundary."""
