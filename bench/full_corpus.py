"""The whole SciFact corpus (5,183 abstracts), ingested once into a cached data folder.

Every quality benchmark runs on the full corpus through the engine's own search, the way a
user's request runs: the gold paper among all its real rivals, not among a few hundred picked
around it. Ingesting takes minutes (embedding ~50,000 sentences), so the loaded database lives in
a data folder that later runs reuse (`--data-dir`, default `~/.cache/research-engine/scifact-full`):

    from full_corpus import corpus_dir, ensure_ingested
    stack = Stack(corpus_dir(args.data_dir), ...)     # embedded Postgres + NATS in that folder
    ensure_ingested(stack.database_url)               # no-op when all 5,183 are there

`task bench:ingest -- --data-dir DIR` fills a new folder while timing the ingest; this module
fills (or completes) one without timing anything.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
DEFAULT_DIR = Path.home() / ".cache" / "research-engine" / "scifact-full"


def corpus_dir(data_dir: Path | None = None) -> Path:
    folder = data_dir or DEFAULT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def corpus_size(data: Path = DATA) -> int:
    with (data / "corpus.jsonl").open() as lines:
        return sum(1 for line in lines if line.strip())


def load_corpus(data: Path = DATA) -> dict[int, dict]:
    """doc_id → the SciFact record (title, abstract sentences)."""
    with (data / "corpus.jsonl").open() as lines:
        return {int(r["doc_id"]): r for r in (json.loads(line) for line in lines if line.strip())}


async def _count(database_url: str) -> int:
    from sqlalchemy import text

    from research_platform.db import create_engine

    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return int(
                (await connection.execute(text("SELECT count(*) FROM corpus_papers"))).scalar_one()
            )
    finally:
        await engine.dispose()


async def _ingest(database_url: str, path: Path) -> object:
    from research_corpus.ingest import ingest_path
    from research_platform.db import create_engine, session_factory

    engine = create_engine(database_url)
    try:
        return await ingest_path(session_factory(engine), path, fmt="scifact", progress=True)
    finally:
        await engine.dispose()


def ensure_ingested(database_url: str, data: Path = DATA) -> int:
    """Ingest the whole corpus unless the database already holds it; the number of papers held."""
    want = corpus_size(data)
    held = asyncio.run(_count(database_url))
    if held < want:
        started = time.perf_counter()
        report = asyncio.run(_ingest(database_url, data / "corpus.jsonl"))
        print(
            f"corpus: ingested the full SciFact corpus in {time.perf_counter() - started:.0f} s ({report})",
            flush=True,
        )
        held = asyncio.run(_count(database_url))
    print(f"corpus: {held} SciFact abstracts (full corpus)", flush=True)
    return held


@contextmanager
def full_corpus_gateway(
    data_dir: Path | None, services: tuple[str, ...], env: dict[str, str]
) -> Iterator[tuple[httpx.Client, int]]:
    """`services` as separate processes on the cached full corpus in `data_dir` (ingested first when
    incomplete), ready; for the block, an `httpx.Client` on the gateway (the stack's API key, 60 s
    timeout) and the number of papers the corpus holds. `env`: service settings for the run."""
    import httpx

    from research_engine.stack import Stack
    from research_platform.embedded import free_port

    stack = Stack(corpus_dir(data_dir), gateway_port=free_port(), services=services, extra_env=env)
    with stack:
        papers = ensure_ingested(stack.database_url)
        stack.wait_ready()
        with httpx.Client(
            base_url=stack.gateway_url, timeout=60, headers=stack.api_headers
        ) as client:
            yield client, papers


def main() -> None:
    """Fill the cached folder: `python bench/full_corpus.py [--data-dir DIR]`."""
    import argparse

    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    pg = EmbeddedPostgres(corpus_dir(args.data_dir)).start()
    try:
        upgrade(pg.url)
        ensure_ingested(pg.url)
    finally:
        pg.stop()


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
