"""Prometheus metrics of the connector, per source, counted once per lookup by the fan-out.

- `research_connector_requests_total{source}` — lookups the source had to answer itself (not
  from the 24 h cache): one per source per search, whatever retries it took underneath;
- `research_connector_cache_hits_total{source}` — lookups answered from the cache, so
  hits / (hits + requests) is the cache hit rate;
- `research_connector_errors_total{source, reason}` — lookups that degraded, by the reason the
  source gave (`http_429`, `http_503`, `timeout`, `deadline`, `malformed_payload`,
  `disabled`, …): the 429 panel reads `reason="http_429"`;
- `research_connector_request_duration_seconds{source}` — the time a non-cached lookup took.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "research_connector_requests_total", "Source lookups not answered from the cache.", ["source"]
)
CACHE_HITS = Counter(
    "research_connector_cache_hits_total",
    "Source lookups answered from the 24 h cache.",
    ["source"],
)
ERRORS = Counter(
    "research_connector_errors_total",
    "Source lookups that degraded, by reason.",
    ["source", "reason"],
)
DURATION = Histogram(
    "research_connector_request_duration_seconds",
    "Time a source took to answer one lookup (cache hits excluded).",
    ["source"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30),
)


def looked_up(source: str, *, cached: bool, degraded: str | None, seconds: float) -> None:
    """Count one lookup of `source` (what `fanout._ask` learnt from it)."""
    if cached:
        CACHE_HITS.labels(source).inc()
    else:
        REQUESTS.labels(source).inc()
        DURATION.labels(source).observe(seconds)
    if degraded:
        ERRORS.labels(source, degraded).inc()
