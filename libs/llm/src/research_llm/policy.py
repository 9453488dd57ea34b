"""The one LLM policy a service asks: which engines, in which order, with what budget.

    policy = LlmPolicy(settings.llm)                          # built once, in the bootstrap
    chain = policy.chain()                                    # researcher, critic, correlator
    engine = policy.choose(remote=lambda chain: LlmEngine(chain, ...), offline=OfflineEngine)
    LlmPolicy(settings.llm, engine="offline").choose(...)     # the scout's `SCOUT__ENGINE=offline`

The order is the chain's: the remote providers `LLM__PROVIDER` and the keys ask for (`auto`:
OpenAI, then Gemini, each when its key is set), always ending with the offline engine; the
budget is the run budget every run of the chain adopts (`LLM__RUN_BUDGET_S` / `_TOKENS` /
`_USD`). A service asks its policy, never `build_chain` or `choose_engine` itself
(`tests/llm/test_policy.py` holds the services to it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx

from research_llm import usage
from research_llm.chain import ProviderChain, build_chain, remote_names
from research_llm.engines import EngineChoice, choose_engine
from research_platform.settings import LLMSettings

R = TypeVar("R")  # the remote engine
O = TypeVar("O")  # the offline engine
OFFLINE = "offline"


@dataclass(frozen=True)
class LlmPolicy:
    """Which engines a service asks, in which order, with what budget (see the module doc).

    `engine="offline"` never builds a chain (`choose` takes the offline engine); `"llm"` (the
    default) asks the chain of `settings`."""

    settings: LLMSettings
    engine: EngineChoice = "llm"

    @property
    def order(self) -> list[str]:
        """The engines asked, first to last: the remote providers, then `offline`."""
        if self.engine == OFFLINE:
            return [OFFLINE]
        return [*remote_names(self.settings), OFFLINE]

    @property
    def budget(self) -> usage.Budget:
        """What one run may spend on remote models (None = unbounded)."""
        return usage.Budget(
            self.settings.run_budget_s,
            self.settings.run_budget_tokens,
            self.settings.run_budget_usd,
        )

    @property
    def remote(self) -> bool:
        """Whether a remote model is asked at all (else the offline engine answers everything)."""
        return self.order != [OFFLINE]

    def chain(self, *, transport: httpx.AsyncBaseTransport | None = None) -> ProviderChain:
        """The provider chain in `order` with `budget` (`transport`: tests inject faults)."""
        return build_chain(self.settings, transport=transport)

    def choose(self, *, remote: Callable[[ProviderChain], R], offline: Callable[[], O]) -> R | O:
        """`remote(chain)` when the policy asks a remote model, `offline()` otherwise."""
        return choose_engine(self.settings, remote=remote, offline=offline, engine=self.engine)
