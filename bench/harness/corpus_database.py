"""Where a corpus benchmark's data and database come from: the SciFact folder (../shared), and a
migrated PostgreSQL — one the run is given (`--database-url`), else an embedded one on a reused
data folder (`--data-dir`) or on a temporary folder."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def require_scifact(data: Path) -> None:
    """Exit with a message unless `data` holds the SciFact corpus."""
    if not (data / "corpus.jsonl").exists():
        sys.exit(
            f"{data} is not present: the SciFact data (../shared/data/scifact) is needed for this benchmark"
        )


@contextmanager
def embedded_database(folder: Path, *, stop: bool = True) -> Iterator[str]:
    """The URL of an embedded PostgreSQL started on `folder` and migrated, for the block; stopped
    after it unless `stop` is False (a reused folder's server left running)."""
    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    pg = EmbeddedPostgres(folder).start()
    try:
        upgrade(pg.url)
        yield pg.url
    finally:
        if stop:
            pg.stop()


@contextmanager
def bench_database(
    url: str | None, folder: Path | None, prefix: str, *, stop_reused: bool = True
) -> Iterator[str]:
    """The URL of a migrated database for the block: `url` when given (migrated, left as it is),
    else an embedded PostgreSQL on `folder`, or on a temporary folder named `prefix…` (removed
    after). The embedded server stops after the block; on a reused `folder` only if `stop_reused`."""
    if url:
        from research_platform.migrate import upgrade

        upgrade(url)
        yield url
        return
    with (
        tempfile.TemporaryDirectory(prefix=prefix) as tmp,
        embedded_database(folder or Path(tmp), stop=stop_reused or folder is None) as embedded,
    ):
        yield embedded
