"""Token and cost accounting, and the per-run budget.

Every remote answer reports its `usage` (tokens in / out); `record` adds one call to every open
accumulator: the call's own (`ProviderChain` opens one per question, returned as the outcome's
`usage`) and the run's (`llm_run`, opened by whoever runs a review, a verification, a source list
or a research task). Cost comes from the price table in `LLMSettings.prices` (USD per million
input / output tokens by model; a model not listed, i.e. a local one, costs 0). Prometheus:
`research_llm_tokens_total{provider, kind}` (metrics.py) and `research_llm_cost_dollars_total{provider}`.

    async with llm_run(budget_s=120, budget_tokens=20_000) as run:
        ...                       # any chain call in this task (and the tasks it starts)
    run.usage.as_dict()           # {"calls": 3, "tokens_in": 2710, "tokens_out": 388, "cost_usd": 0.0, ...}

When a run's budget is spent, the chain asks no more remote models in it: the offline engine
answers and the failure says "run budget spent".
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from prometheus_client import Counter

COST = Counter("research_llm_cost_dollars", "Estimated spend on remote LLM APIs (price table of the settings; local models 0).", ["provider"])


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

    def as_dict(self) -> dict:
        return {
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": round(self.cost_usd, 9),
            "seconds": round(self.seconds, 3),
            "models": dict(self.models),
        }


@dataclass
class Run:
    """One run's usage and budget (None = unbounded)."""

    budget_s: float | None = None
    budget_tokens: int | None = None
    usage: Usage = field(default_factory=Usage)

    def exhausted(self) -> str | None:
        """Why the budget is spent, or None."""
        if self.budget_s is not None and self.usage.seconds >= self.budget_s:
            return f"run budget spent ({self.usage.seconds:.1f}s of {self.budget_s:g}s model time)"
        if self.budget_tokens is not None and self.usage.tokens >= self.budget_tokens:
            return f"run budget spent ({self.usage.tokens} of {self.budget_tokens} tokens)"
        return None

    def remaining_s(self) -> float | None:
        return None if self.budget_s is None else max(0.0, self.budget_s - self.usage.seconds)


_RUN: contextvars.ContextVar[Run | None] = contextvars.ContextVar("research_llm_run", default=None)
_CALLS: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar("research_llm_calls", default=())


def current_run() -> Run | None:
    return _RUN.get()


@asynccontextmanager
async def llm_run(budget_s: float | None = None, budget_tokens: int | None = None) -> AsyncIterator[Run]:
    """Account (and bound) every chain call made inside, including in tasks started inside."""
    run = Run(budget_s=budget_s, budget_tokens=budget_tokens)
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)


@contextmanager
def within(run: Run) -> Iterator[Run]:
    """Make `run` the current run again (an engine that spans several calls keeps its own `Run`)."""
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)


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


def price(prices: Mapping[str, tuple[float, float]], model: str, tokens_in: int, tokens_out: int) -> float:
    """USD for one call; a model missing from the table (a local one) costs 0."""
    per_million = prices.get(model)
    if per_million is None:
        return 0.0
    return (tokens_in * per_million[0] + tokens_out * per_million[1]) / 1_000_000


def record(provider: str, model: str, tokens_in: int, tokens_out: int, cost_usd: float, seconds: float) -> Usage:
    """Add one answered request to the open call and run accumulators (and the cost counter)."""
    one = Usage(calls=1, tokens_in=tokens_in, tokens_out=tokens_out, cost_usd=cost_usd, seconds=seconds,
                models={f"{provider}:{model}": 1})
    if cost_usd:
        COST.labels(provider).inc(cost_usd)
    run = _RUN.get()
    for target in (*_CALLS.get(), *((run.usage,) if run is not None else ())):
        target.add(one)
    return one


class Stopwatch:
    """Seconds since construction."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.started
