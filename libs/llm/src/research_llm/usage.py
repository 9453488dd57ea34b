"""Token and cost accounting, and the per-run budget.

Every remote answer reports its `usage` (tokens in / out); `record` adds one call to every open
accumulator: the call's own (`ProviderChain` opens one per question, returned as the outcome's
`usage`) and the run's (`llm_run`, opened by whoever runs a review, a verification, a source list
or a research task). Cost comes from the price table in `LLMSettings.prices` (USD per million
input / output tokens by model; a model not listed, i.e. a local one, costs 0). Prometheus:
`research_llm_tokens_total{provider, kind}` (metrics.py) and `research_llm_cost_dollars_total{provider}`.

    async with llm_run(budget_s=120, budget_tokens=20_000, budget_usd=0.50) as run:
        ...                       # any chain call in this task (and the tasks it starts)
    run.usage.as_dict()           # {"calls": 3, "tokens_in": 2710, "tokens_out": 388, "cost_usd": 0.0, ...}

Runs nest: a request counts in every open run, and the budget of any of them stops it. A run
opened without a budget (`research_modes.mode_run` opens one around every review, verification
and source list) takes the budget of the first chain that asks in it (`ProviderChain.bounded`,
the settings' `LLM__RUN_BUDGET_S` / `_TOKENS` / `_USD`). When a run's budget is spent, no remote
model is asked again in it: the offline engine answers, the failure says "run budget spent (…)"
and the run keeps the reason among its `fallbacks` (shown in the run's trace).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter

COST = Counter(
    "research_llm_cost_dollars",
    "Estimated spend on remote LLM APIs (price table of the settings; local models 0).",
    ["provider"],
)


@dataclass
class Usage:
    """Calls, tokens in / out, estimated cost and model seconds, summed."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    models: dict[str, int] = field(default_factory=dict)

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.cost_usd += other.cost_usd
        self.seconds += other.seconds
        for model, n in other.models.items():
            self.models[model] = self.models.get(model, 0) + n

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": round(self.cost_usd, 9),
            "seconds": round(self.seconds, 3),
            "models": dict(self.models),
        }


@dataclass(frozen=True)
class Budget:
    """What one run may spend on remote models (None = unbounded)."""

    seconds: float | None = None
    tokens: int | None = None
    usd: float | None = None

    @property
    def bounded(self) -> bool:
        return any(limit is not None for limit in (self.seconds, self.tokens, self.usd))

    def spent(self, used: Usage) -> str | None:
        """Why `used` exhausts this budget, or None."""
        if self.seconds is not None and used.seconds >= self.seconds:
            return f"run budget spent ({used.seconds:.1f}s of {self.seconds:g}s model time)"
        if self.tokens is not None and used.tokens >= self.tokens:
            return f"run budget spent ({used.tokens} of {self.tokens} tokens)"
        if self.usd is not None and used.cost_usd >= self.usd:
            return f"run budget spent (${used.cost_usd:.6g} of ${self.usd:.6g} estimated)"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "tokens": self.tokens, "usd": self.usd}


@dataclass
class Run:
    """One run's usage, its budget, and the questions the offline engine answered instead of a model."""

    budget_s: float | None = None
    budget_tokens: int | None = None
    budget_usd: float | None = None
    usage: Usage = field(default_factory=Usage)
    fallbacks: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"question", "reasons"}, in order

    @property
    def budget(self) -> Budget:
        return Budget(self.budget_s, self.budget_tokens, self.budget_usd)

    def adopt(self, budget: Budget) -> None:
        """Take `budget` when this run was opened without one (see the module docstring)."""
        if not self.budget.bounded:
            self.budget_s, self.budget_tokens, self.budget_usd = (
                budget.seconds,
                budget.tokens,
                budget.usd,
            )

    def exhausted(self) -> str | None:
        """Why the budget is spent, or None."""
        return self.budget.spent(self.usage)

    def remaining_s(self) -> float | None:
        return None if self.budget_s is None else max(0.0, self.budget_s - self.usage.seconds)

    def fell_back(self, question: str, reasons: list[str]) -> None:
        """Note that `question` was answered without a model, and why (the providers' failures)."""
        self.fallbacks.append({"question": question, "reasons": reasons})

    def summary(self) -> dict[str, Any]:
        """What a run's trace shows: its usage, budget and fallbacks."""
        return {
            **self.usage.as_dict(),
            "budget": self.budget.as_dict(),
            "budget_spent": self.exhausted(),
            "fallbacks": list(self.fallbacks),
        }


_RUNS: contextvars.ContextVar[tuple[Run, ...]] = contextvars.ContextVar(
    "research_llm_runs", default=()
)
_CALLS: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar(
    "research_llm_calls", default=()
)


def current_run() -> Run | None:
    """The innermost open run, or None."""
    runs = _RUNS.get()
    return runs[-1] if runs else None


def exhausted() -> str | None:
    """Why some open run's budget is spent (the innermost first), or None."""
    return next((why for why in (run.exhausted() for run in reversed(_RUNS.get())) if why), None)


def remaining_s() -> float | None:
    """The fewest model seconds any open run has left (None = unbounded)."""
    left = [r for r in (run.remaining_s() for run in _RUNS.get()) if r is not None]
    return min(left) if left else None


def fell_back(question: str, reasons: list[str]) -> None:
    """Note a question the offline engine answered (or nobody did) in every open run."""
    for run in _RUNS.get():
        run.fell_back(question, reasons)


@asynccontextmanager
async def llm_run(
    budget_s: float | None = None, budget_tokens: int | None = None, budget_usd: float | None = None
) -> AsyncIterator[Run]:
    """Account (and bound) every chain call made inside, including in tasks started inside."""
    with within(Run(budget_s=budget_s, budget_tokens=budget_tokens, budget_usd=budget_usd)) as run:
        yield run


@contextmanager
def within(run: Run) -> Iterator[Run]:
    """Make `run` the innermost open run (an engine that spans several calls keeps its own `Run`)."""
    token = _RUNS.set((*_RUNS.get(), run))
    try:
        yield run
    finally:
        _RUNS.reset(token)


@contextmanager
def collect() -> Iterator[Usage]:
    """A fresh accumulator of every request made inside (nested ones each see their own share):
    the chain opens one per question; an engine may open one around a step (its trace shows it)."""
    usage = Usage()
    token = _CALLS.set((*_CALLS.get(), usage))
    try:
        yield usage
    finally:
        _CALLS.reset(token)


def price(
    prices: Mapping[str, tuple[float, float]], model: str, tokens_in: int, tokens_out: int
) -> float:
    """USD for one call; a model missing from the table (a local one) costs 0."""
    per_million = prices.get(model)
    if per_million is None:
        return 0.0
    return (tokens_in * per_million[0] + tokens_out * per_million[1]) / 1_000_000


def record(
    provider: str, model: str, tokens_in: int, tokens_out: int, cost_usd: float, seconds: float
) -> Usage:
    """Add one answered request to the open call and run accumulators (and the cost counter)."""
    one = Usage(
        calls=1,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=cost_usd,
        seconds=seconds,
        models={f"{provider}:{model}": 1},
    )
    if cost_usd:
        COST.labels(provider).inc(cost_usd)
    for target in (*_CALLS.get(), *(run.usage for run in _RUNS.get())):
        target.add(one)
    return one


class Stopwatch:
    """Seconds since construction."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.started
