"""The LLM engine choice every mode makes the same way: a remote model when the provider chain has
one that answers free-form schema questions, the mode's offline engine otherwise."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from research_llm import ProviderChain
from research_llm.providers.base import SchemaAnswerer

T = TypeVar("T")


def remote_configured(chain: ProviderChain | None) -> bool:
    """Whether any provider of the chain answers free-form schema questions (a remote model)."""
    return chain is not None and any(isinstance(p, SchemaAnswerer) for p in chain.providers)


def choose(chain: ProviderChain | None, remote: Callable[[], T], offline: Callable[[], T]) -> T:
    """`remote()` with a remote model configured, `offline()` without."""
    return remote() if remote_configured(chain) else offline()
