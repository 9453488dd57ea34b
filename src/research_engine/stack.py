"""The embedded stack: servers (embedded or external), migrations, and every service as its own process.

`NATS_URL` / `DATABASE_URL` select external servers; otherwise nats-server and PostgreSQL run
under `data_dir` on free loopback ports (with `cluster`, three nats-servers as a JetStream
cluster, and the streams at three replicas). Services are supervised: one that dies is restarted.
Each service serves Prometheus metrics on its own free loopback port (`METRICS_PORT`, kept
across restarts); `metrics_targets` (`<data_dir>/prometheus/targets.json`) lists them in
Prometheus's file_sd format, so a local Prometheus scrapes every service with `file_sd_configs`.
Starting the servers also makes sure the local admin key exists (`local_key.py`): `admin_key`,
sent by `api_headers`, is what the demo and the CLI use against the gateway; and that the
installation secret exists (`research_platform.installation`, `<data_dir>/installation.key`
unless `INSTALLATION_SECRET` / `INSTALLATION_SECRET_FILE`), which every service reads.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import httpx

from research_engine.local_key import console_sign_in_url, ensure_local_admin_key
from research_platform import installation
from research_platform.broker import ensure_streams_at
from research_platform.embedded import EmbeddedNats, EmbeddedPostgres, env_for, free_port
from research_platform.embedded_cluster import EmbeddedNatsCluster
from research_platform.migrate import upgrade
from research_platform.settings import Settings

# Start order: the gateway last, so it only answers when the workers are there.
SERVICES = (
    "connector",
    "researcher",
    "critic",
    "correlator",
    "replicator",
    "librarian",
    "scout",
    "reviewer",
    "verifier",
    "gateway",
)


def ensure_embedded_database(data_dir: Path) -> str:
    """A migrated database URL: `DATABASE_URL`, or the embedded Postgres in `data_dir`.

    When this call had to start the embedded server, it is stopped again at interpreter exit.
    """
    settings = Settings().model_copy(update={"data_dir": data_dir})
    secret = installation.installation_secret(settings)
    installation.install(secret)  # a key created next (`keys create`) is audited with it
    external = settings.database_url
    if external:
        upgrade(
            external,
            installation_secret=secret,
            migrations=settings.research_engine_migrations,
        )
        return external
    pg = EmbeddedPostgres(data_dir)
    already = pg.is_running()
    pg.start()
    if not already:
        atexit.register(pg.stop)
    upgrade(pg.url, installation_secret=secret, migrations=settings.research_engine_migrations)
    return pg.url


@dataclass
class Stack:
    """Servers plus service processes, started and stopped as one."""

    data_dir: Path
    gateway_port: int = 8080
    services: tuple[str, ...] = SERVICES
    extra_env: dict[str, str] = field(default_factory=dict)
    nats_url: str = ""
    database_url: str = ""
    cluster: bool = False
    admin_key: str = ""
    admin_key_created: bool = False
    _nats: EmbeddedNats | None = None
    _nats_cluster: EmbeddedNatsCluster | None = None
    _pg: EmbeddedPostgres | None = None
    metrics_ports: dict[str, int] = field(default_factory=dict)
    _procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _stopping: bool = False

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    @property
    def api_headers(self) -> dict[str, str]:
        """Request headers carrying the local admin key."""
        return {"X-API-Key": self.admin_key}

    def console_url(self) -> str:
        """A console URL signing a browser in as the local admin: a single-use code that expires
        in minutes (`GATEWAY_AUTH__CONSOLE_CODE_TTL_S`), like a notebook server's token URL."""
        ttl = Settings().gateway_auth.console_code_ttl_s
        return console_sign_in_url(self.gateway_url, self.database_url, self.admin_key, ttl)

    @property
    def secret_file(self) -> Path:
        """The installation secret's file every service reads (unless a setting names another)."""
        return installation.secret_path(Settings().model_copy(update={"data_dir": self.data_dir}))

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def metrics_targets(self) -> Path:
        return self.data_dir / "prometheus" / "targets.json"

    def metrics_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.metrics_ports[name]}/metrics"

    def write_metrics_targets(self) -> None:
        """Every service's metrics address as a Prometheus file_sd list (`job` = the service)."""
        groups = [
            {"targets": [f"127.0.0.1:{port}"], "labels": {"job": name}}
            for name, port in sorted(self.metrics_ports.items())
        ]
        self.metrics_targets.parent.mkdir(parents=True, exist_ok=True)
        partial = self.metrics_targets.with_suffix(".partial")
        partial.write_text(json.dumps(groups, indent=2) + "\n")
        partial.replace(
            self.metrics_targets
        )  # Prometheus re-reads the file: never show it half-written

    def start_servers(self) -> None:
        """Start (or find) NATS and Postgres, migrate the schema, create the streams and the local admin key."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        configured = Settings()
        self.nats_url = self.nats_url or configured.nats_url or ""
        if not self.nats_url and self.cluster:
            self._nats_cluster = EmbeddedNatsCluster(self.data_dir).start()
            self.nats_url = self._nats_cluster.url
        elif not self.nats_url:
            self._nats = EmbeddedNats(self.data_dir).start()
            self.nats_url = self._nats.url
        self.database_url = self.database_url or configured.database_url or ""
        if not self.database_url:
            self._pg = EmbeddedPostgres(self.data_dir).start()
            self.database_url = self._pg.url
        settings = Settings().model_copy(update={"data_dir": self.data_dir})
        secret = installation.installation_secret(settings)  # created at first start
        installation.install(secret)  # the local admin key's audit row is keyed too
        upgrade(
            self.database_url,
            installation_secret=secret,
            migrations=settings.research_engine_migrations,
        )
        asyncio.run(ensure_streams_at(self.nats_url, settings))
        self.admin_key, self.admin_key_created = ensure_local_admin_key(
            self.data_dir, self.database_url
        )

    def service_env(self) -> dict[str, str]:
        env = env_for(self.nats_url, self.database_url)
        env["GATEWAY_PORT"] = str(self.gateway_port)
        if not Settings().installation_secret:
            env["INSTALLATION_SECRET_FILE"] = str(self.secret_file)
        env.setdefault("LOG_JSON", "true")
        # Several model-using processes share the cores: one math thread each avoids oversubscription.
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env.update(self.extra_env)
        return env

    def start_service(self, name: str) -> subprocess.Popen[bytes]:
        """Start one service process (output appended to `logs/<name>.log`)."""
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.logs_dir / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child
        env = self.service_env()
        env["METRICS_PORT"] = str(self.metrics_ports.setdefault(name, free_port()))
        env["METRICS_HOST"] = "127.0.0.1"
        proc = subprocess.Popen(  # noqa: S603 - one of our own services
            [sys.executable, "-m", f"research_{name}"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._procs[name] = proc
        return proc

    def start_services(self) -> None:
        for name in self.services:
            self.start_service(name)
        self.write_metrics_targets()

    def process(self, name: str) -> subprocess.Popen[bytes]:
        return self._procs[name]

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until the gateway answers `/healthz` (it starts last)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_processes(restart=False)
            try:
                if httpx.get(f"{self.gateway_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise TimeoutError(
            f"the gateway did not become healthy in {timeout:.0f}s (see {self.logs_dir})"
        )

    def check_processes(self, *, restart: bool = True) -> list[str]:
        """Names of services that exited; restarted when `restart` (the supervisor's tick)."""
        died = [name for name, proc in self._procs.items() if proc.poll() is not None]
        for name in died:
            if restart and not self._stopping:
                self.start_service(name)
        if died and not restart:
            raise RuntimeError(f"service(s) exited at start: {died} (see {self.logs_dir})")
        return died

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM every service, SIGKILL what remains after `timeout`, then stop embedded servers."""
        self._stopping = True
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in self._procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._procs.clear()
        if self._nats:
            self._nats.stop()
        if self._nats_cluster:
            self._nats_cluster.stop()
        if self._pg:
            self._pg.stop()

    def __enter__(self) -> Self:
        self.start_servers()
        self.start_services()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
