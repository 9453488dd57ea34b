"""Two gateway-style apps in one process (tests, tools) share the process's HTTP collectors:
neither collides with the other's registration and both are counted on the real `/metrics`."""

from __future__ import annotations

import uuid

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from research_gateway.observability import instrument
from tests.scrape import scrape, value

pytestmark = pytest.mark.unit  # in-process apps and the process's own /metrics: no servers


def _app(path: str) -> FastAPI:
    app = FastAPI()

    @app.get(path)
    def answer() -> dict[str, str]:
        return {"ok": "yes"}

    instrument(app)
    return app


def test_a_second_app_in_one_process_is_counted_too(metrics_url: str) -> None:
    path = f"/probe-{uuid.uuid4().hex[:8]}"
    for _ in range(2):
        with TestClient(_app(path)) as client:
            assert client.get(path).status_code == 200
            assert client.get(path).status_code == 200
    counted = value(
        scrape(metrics_url), "http_requests_total", handler=path, method="GET", status="2xx"
    )
    assert counted == 4.0
