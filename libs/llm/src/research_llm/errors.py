"""Errors of the LLM layer.

LLMError                   a ResearchEngineError (research_contracts.errors)
├── ProviderError          one provider could not answer; the chain moves on to the next
│   ├── ProviderUnavailable    timeout, transport fault, 429 or 5xx: not retried here
│   └── InvalidResponse        the answer did not validate against the JSON schema
├── NoProviderAnswered     every provider in the chain failed (never raised while the
│                          offline engine is last in the chain)
└── DoesNotFit             a prompt over the context budget with every data block emptied
                           (also a ValueError; the provider answers it as a ProviderError)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from research_contracts.errors import ResearchEngineError

if TYPE_CHECKING:
    from research_llm.schema import ProviderFailure


class LLMError(ResearchEngineError):
    """Base of every error research_llm raises on purpose."""


class ProviderError(LLMError):
    """A provider failed to produce a usable answer."""

    def __init__(self, reason: str, *, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class ProviderUnavailable(ProviderError):
    """Timeout, transport error, rate limit (429) or server error (5xx)."""


class InvalidResponse(ProviderError):
    """The provider answered, but not with JSON that validates against the schema."""


class NoProviderAnswered(LLMError):
    """Every provider of the chain failed; `failures` lists why."""

    def __init__(self, failures: list[ProviderFailure]) -> None:
        super().__init__(
            "; ".join(f"{f.provider}/{f.model}: {f.reason}" for f in failures) or "no provider"
        )
        self.failures = failures


class DoesNotFit(LLMError, ValueError):
    """Even with every data block emptied the conversation is over the budget."""
