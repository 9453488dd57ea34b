"""Connector test helpers: recorded responses from ../shared/fixtures, a scriptable fake API
(httpx.MockTransport), a hand-driven clock, and a source registry wired to them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from research_connector.cache import AnswerCache
from research_connector.incidents import Incidents
from research_connector.ratelimit import RateLimits
from research_connector.registry import build_sources
from research_connector.settings import ConnectorSettings
from research_connector.sources.base import Source
from research_ledger import Ledger


class ManualClock:
    """A monotonic clock that only moves when told to (or when a stubbed sleep is awaited)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class FakeApi:
    """Routes requests by host to handlers and counts every request it answers."""

    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for host, handler in self.routes.items():
            if request.url.host == host:
                return handler(request)
        return httpx.Response(599, text="no route in the fake API")

    def count(self, host: str) -> int:
        return sum(1 for r in self.requests if r.url.host == host)


@pytest.fixture(scope="session")
def fixtures_dir(shared_dir: Path) -> Path:
    return shared_dir / "fixtures"


@pytest.fixture
def recorded(fixtures_dir: Path) -> Callable[[str], bytes]:
    def read(name: str) -> bytes:
        return (fixtures_dir / name).read_bytes()

    return read


@pytest.fixture
def recorded_json(recorded: Callable[[str], bytes]) -> Callable[[str], Any]:
    return lambda name: json.loads(recorded(name))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def fake_api() -> FakeApi:
    return FakeApi()


@pytest.fixture
def make_sources(fake_api: FakeApi, clock: ManualClock):
    """Build the registry against the fake API; pass `sessions` for audit rows and the cache."""

    clients: list[httpx.AsyncClient] = []

    def build(
        settings: ConnectorSettings | None = None, sessions=None, cache: AnswerCache | None = None
    ) -> dict[str, Source]:
        client = httpx.AsyncClient(transport=httpx.MockTransport(fake_api.handle))
        clients.append(client)
        return build_sources(
            settings or ConnectorSettings(),
            client=client,
            incidents=Incidents(Ledger(sessions) if sessions is not None else None),
            cache=cache,
            limits=RateLimits(clock=clock, sleep=clock.sleep),
            sleep=clock.sleep,
        )

    return build
