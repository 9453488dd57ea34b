"""The services as separate OS processes against given servers, with the demo corpus ingested."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from bench.harness.servers import Servers, start_servers
from research_engine.stack import Stack
from research_platform.embedded import free_port


class Folders(Protocol):
    """What `running_stack` asks of pytest's tmp_path_factory: a fresh folder per name."""

    def mktemp(self, basename: str, numbered: bool = True) -> Path: ...


DEMO_CORPUS = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "research_engine"
    / "demo_data"
    / "scifact_demo.jsonl"
)


async def ingest_demo_corpus(database_url: str) -> None:
    from research_corpus.ingest import ingest_path
    from research_platform.db import create_engine, session_factory

    engine = create_engine(database_url)
    try:
        await ingest_path(session_factory(engine), DEMO_CORPUS, fmt="scifact", progress=False)
    finally:
        await engine.dispose()


@contextmanager
def running_stack(
    servers: Servers,
    tmp_path_factory: Folders,
    extra_env: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """Every service running as its own process; the gateway on a free port.

    Two stacks on the session's one NATS share the durable consumers, so a stack must be gone
    before the next one starts: each package (e2e, chaos) holds its own through a fixture whose
    scope ends with that package or module, never the session.
    """
    running = Stack(
        tmp_path_factory.mktemp("stack"),
        gateway_port=free_port(),
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        extra_env={
            "ACK_WAIT_S": "10",
            **(extra_env or {}),
        },  # a killed consumer's messages come back after 10 s, not 60
    )
    running.start_servers()
    # ingest in a thread with its own loop: the session loop of pytest-asyncio may be running
    import threading

    errors: list[BaseException] = []

    def _run() -> None:
        try:
            asyncio.run(ingest_demo_corpus(servers.database_url))
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    worker = threading.Thread(target=_run)
    worker.start()
    running.start_services()
    worker.join()
    if errors:
        running.stop()
        raise errors[0]
    try:
        running.wait_ready(timeout=180)
        yield running
    finally:
        running.stop()


@contextmanager
def demo_stack(prefix: str, services: tuple[str, ...]) -> Iterator[Stack]:
    """Throw-away servers in a temporary folder, migrated, the demo corpus ingested, and
    `services` running as processes, the gateway on a free port (bench:console, docs:screens)."""
    from research_platform.migrate import upgrade

    with (
        tempfile.TemporaryDirectory(prefix=prefix) as tmp,
        start_servers(Path(tmp)) as servers,
    ):
        upgrade(servers.database_url)
        asyncio.run(ingest_demo_corpus(servers.database_url))
        (Path(tmp) / "stack").mkdir()
        stack = Stack(
            Path(tmp) / "stack",
            gateway_port=free_port(),
            services=services,
            nats_url=servers.nats_url,
            database_url=servers.database_url,
            extra_env={"ACK_WAIT_S": "10"},
        )
        stack.start_servers()
        try:
            stack.start_services()
            stack.wait_ready(timeout=180)
            yield stack
        finally:
            stack.stop()
