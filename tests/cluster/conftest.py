"""A 3-node NATS JetStream cluster on loopback for the tests of this folder (one per session).

The members are real `nats-server` processes (see `research_platform.embedded_cluster`); tests
may kill and restart members, and must leave all three running when they finish.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from research_platform.embedded_cluster import EmbeddedNatsCluster


@pytest.fixture(scope="session")
def nats_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNatsCluster]:
    cluster = EmbeddedNatsCluster(Path(tmp_path_factory.mktemp("nats-cluster"))).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def healthy_cluster(nats_cluster: EmbeddedNatsCluster) -> Iterator[EmbeddedNatsCluster]:
    """The session cluster with every member up before and after the test."""
    for node in nats_cluster.nodes:
        nats_cluster.restart(node.name)
    nats_cluster.wait_healthy()
    yield nats_cluster
    for node in nats_cluster.nodes:
        nats_cluster.restart(node.name)
    nats_cluster.wait_healthy(60)
