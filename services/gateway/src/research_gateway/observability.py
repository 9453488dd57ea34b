"""The gateway's Prometheus metrics: HTTP from prometheus-fastapi-instrumentator, plus the shared
process registry (broker publishes, the task counter) on `METRICS_PORT` like every service.

HTTP series (`http_requests_total{handler, method, status}`,
`http_request_duration_seconds{handler, method}`, `http_request_duration_highr_seconds`, the
request and response sizes) are labelled by the route template (`/api/research/v1/tasks/{task_id}`),
never the raw path, so ids do not multiply series. `/metrics` and `/healthz` are left out, and a
streaming response (the SSE run stream) is timed to its first byte, not to the end of the stream.
The same registry is also served at the gateway's own `/metrics`. No in-progress gauge: the
instrumentator registers it per app, which a second app in one process (tests, tools) refuses.
"""

from __future__ import annotations

import os

from fastapi import FastAPI
from prometheus_client import make_asgi_app
from prometheus_fastapi_instrumentator import Instrumentator

from research_platform import metrics


def instrument(app: FastAPI) -> None:
    """Count and time every route of `app`; mount the registry at `/metrics`."""
    Instrumentator(
        excluded_handlers=["/metrics", "/healthz"],
        should_exclude_streaming_duration=True,
    ).instrument(app)
    app.mount("/metrics", make_asgi_app())


def serve_metrics() -> None:
    """Serve the registry on `METRICS_PORT` too (the port Prometheus scrapes every service on)."""
    port = os.environ.get("METRICS_PORT")
    if port:
        metrics.serve(int(port), os.environ.get("METRICS_HOST", "0.0.0.0"))  # noqa: S104 - scraped by Prometheus
