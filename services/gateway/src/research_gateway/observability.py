"""The gateway's Prometheus metrics: HTTP from prometheus-fastapi-instrumentator, plus the shared
process registry (broker publishes, the task counter) on `METRICS_PORT` like every service.

HTTP series (`http_requests_total{handler, method, status}`,
`http_request_duration_seconds{handler, method}`, `http_request_duration_highr_seconds`, the
request and response sizes) are labelled by the route template (`/api/research/v1/tasks/{task_id}`),
never the raw path, so ids do not multiply series. `/metrics` and `/healthz` are left out, and a
streaming response (the SSE run stream) is timed to its first byte, not to the end of the stream.
The same registry is also served at the gateway's own `/metrics`.

The HTTP collectors are created ONCE per process (`http_metrics()`) and every app's instrumentator
records into them: left to itself the instrumentator registers fresh collectors per app, and a
second app in one process (tests, tools) either collides (`Duplicated timeseries`) or is silently
not counted. No in-progress gauge for the same reason (the instrumentator builds it per app).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from fastapi import FastAPI
from prometheus_client import make_asgi_app
from prometheus_fastapi_instrumentator import Instrumentator
from prometheus_fastapi_instrumentator import metrics as http
from prometheus_fastapi_instrumentator.metrics import Info

from research_platform import metrics
from research_platform.settings import Settings


@cache
def http_metrics() -> Callable[[Info], None]:
    """The process's HTTP collectors (the instrumentator's default set), registered once."""
    recorder = http.default(should_exclude_streaming_duration=True)
    if recorder is None:  # the instrumentator swallows a duplicate registration and returns None
        raise RuntimeError("HTTP metrics were registered outside http_metrics()")
    return recorder


def instrument(app: FastAPI) -> None:
    """Count and time every route of `app`; mount the registry at `/metrics`."""
    Instrumentator(
        excluded_handlers=["/metrics", "/healthz"],
        should_exclude_streaming_duration=True,
    ).add(http_metrics()).instrument(app)
    app.mount("/metrics", make_asgi_app())


def serve_metrics(settings: Settings) -> None:
    """Serve the registry on `METRICS_PORT` too (the port Prometheus scrapes every service on)."""
    if settings.metrics_port:
        metrics.serve(settings.metrics_port, settings.metrics_host)
