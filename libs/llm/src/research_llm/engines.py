"""The one engine choice every mode makes (reviewer, verifier, scout): a remote model when the
provider chain has one that answers free-form schema questions, the mode's offline engine
otherwise.

    engine = choose_engine(settings.llm, remote=lambda chain: LlmEngine(chain, ...), offline=OfflineEngine)

`engine="offline"` (the scout's `SCOUT__ENGINE=offline`, its default) chooses the offline engine
without building a chain; `"llm"` (the reviewer's and verifier's only choice) builds the chain
`LLM__…` asks for and takes the remote engine when a remote model is in it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

from research_llm.chain import ProviderChain, build_chain
from research_llm.providers.base import SchemaAnswerer
from research_platform.settings import LLMSettings

R = TypeVar("R")  # the remote engine
O = TypeVar("O")  # the offline engine
EngineChoice = Literal["offline", "llm"]


def remote_configured(chain: ProviderChain | None) -> bool:
    """Whether any provider of the chain answers free-form schema questions (a remote model)."""
    return chain is not None and any(isinstance(p, SchemaAnswerer) for p in chain.providers)


def choose_engine(
    settings: LLMSettings,
    *,
    remote: Callable[[ProviderChain], R],
    offline: Callable[[], O],
    engine: EngineChoice = "llm",
) -> R | O:
    """`remote(chain)` when `engine` is `llm` and the chain of `settings` holds a remote model,
    `offline()` otherwise."""
    if engine == "offline":
        return offline()
    chain = build_chain(settings)
    return remote(chain) if remote_configured(chain) else offline()
