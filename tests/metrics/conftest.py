"""The test process serves its Prometheus registry once, like a service with METRICS_PORT."""

from __future__ import annotations

import pytest

from research_platform import metrics
from research_platform.embedded import free_port


@pytest.fixture(scope="session")
def metrics_url() -> str:
    port = free_port()
    metrics.serve(port, "127.0.0.1")
    return f"http://127.0.0.1:{port}/metrics"
