"""The services as separate OS processes against the session's real servers, with the demo corpus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.harness.servers import Servers
from bench.harness.stack import running_stack
from research_engine.stack import Stack


@pytest.fixture(scope="package")
def stack(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(servers, tmp_path_factory) as running:
        yield running
