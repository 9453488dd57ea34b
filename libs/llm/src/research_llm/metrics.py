"""Prometheus metrics of the LLM chain: calls, failures, tokens and latency per provider.

Counted where the chain asks each provider (`call`), so every service that holds a chain
(researcher, critic, correlator, the modes) reports them on its own metrics port:

- `research_llm_calls_total{provider, operation, outcome=ok|failed}`;
- `research_llm_failures_total{provider, reason}` — reason `http_<status>` (429, 5xx, 4xx),
  `timeout`, `unavailable` (transport), `invalid_response` (no valid JSON after the one
  corrective retry) or `error`;
- `research_llm_call_duration_seconds{provider, operation}` (histogram);
- `research_llm_tokens_total{provider, kind=prompt|completion}` — what the remote APIs report as
  used (`usage` / `usageMetadata`); the offline engine spends none.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Histogram

from research_llm.errors import InvalidResponse, ProviderError, ProviderUnavailable

CALLS = Counter(
    "research_llm_calls_total",
    "Questions put to an LLM provider, by outcome.",
    ["provider", "operation", "outcome"],
)
FAILURES = Counter(
    "research_llm_failures_total", "LLM provider failures, by reason.", ["provider", "reason"]
)
DURATION = Histogram(
    "research_llm_call_duration_seconds",
    "Time one provider took to answer (or fail) one question, corrective retry included.",
    ["provider", "operation"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60),
)
TOKENS = Counter(
    "research_llm_tokens_total", "Tokens the remote LLM APIs report as used.", ["provider", "kind"]
)


def failure_reason(exc: BaseException) -> str:
    """A short, bounded label for why a provider failed (never the provider's message)."""
    status = getattr(exc, "status", None)
    if isinstance(status, int):
        return f"http_{status}"
    if isinstance(exc, TimeoutError) or (
        isinstance(exc, ProviderError) and exc.reason.startswith("timeout")
    ):
        return "timeout"
    if isinstance(exc, InvalidResponse):
        return "invalid_response"
    if isinstance(exc, ProviderUnavailable):
        return "unavailable"
    return "error"


@contextmanager
def call(provider: str, operation: str) -> Iterator[None]:
    """Count and time one question to `provider`; an exception is counted as a failure and re-raised."""
    started = time.perf_counter()
    try:
        yield
    except asyncio.CancelledError:
        raise  # the caller gave up (shutdown): not the provider's failure
    except Exception as exc:
        CALLS.labels(provider, operation, "failed").inc()
        FAILURES.labels(provider, failure_reason(exc)).inc()
        raise
    else:
        CALLS.labels(provider, operation, "ok").inc()
    finally:
        DURATION.labels(provider, operation).observe(time.perf_counter() - started)


def tokens(provider: str, prompt: int | None, completion: int | None) -> None:
    """Add the tokens one remote answer reports (missing counts are skipped)."""
    if prompt:
        TOKENS.labels(provider, "prompt").inc(prompt)
    if completion:
        TOKENS.labels(provider, "completion").inc(completion)
