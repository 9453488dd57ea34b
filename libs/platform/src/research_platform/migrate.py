"""Run the Alembic migrations in the top-level `migrations/` folder programmatically."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config


def migrations_dir(configured: str | Path | None = None) -> Path:
    """`configured` (the setting `RESEARCH_ENGINE_MIGRATIONS`), or `migrations/` of the checkout
    this package is installed from."""
    if configured:
        return Path(configured)
    for parent in Path(__file__).resolve().parents:
        if (parent / "migrations" / "env.py").exists():
            return parent / "migrations"
    raise RuntimeError("migrations/ not found: set RESEARCH_ENGINE_MIGRATIONS")


def _run(
    step: str,
    database_url: str,
    revision: str,
    installation_secret: bytes | None = None,
    migrations: str | Path | None = None,
) -> None:
    """Alembic's `step` ("upgrade" / "downgrade") to `revision`, outside any running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        config = Config()
        config.attributes["installation_secret"] = installation_secret
        config.set_main_option("script_location", str(migrations_dir(migrations)))
        config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
        getattr(command, step)(config, revision)
        return
    raise RuntimeError(
        f"{step}() blocks: call it from a thread (asyncio.to_thread) inside a running loop"
    )


def upgrade(
    database_url: str,
    revision: str = "head",
    *,
    installation_secret: bytes | None = None,
    migrations: str | Path | None = None,
) -> None:
    """Bring the database at `database_url` to `revision` (blocking; runs its own event loop).

    `installation_secret` is what a migration keying stored digests uses (0016); unset, such a
    migration reads it from the settings (`research_platform.installation`) when it has rows to
    rewrite. `migrations` is the folder of the migrations (`migrations_dir`)."""
    _run("upgrade", database_url, revision, installation_secret, migrations)


def downgrade(database_url: str, revision: str, *, migrations: str | Path | None = None) -> None:
    """Take the database at `database_url` back to `revision` (blocking, like `upgrade`)."""
    _run("downgrade", database_url, revision, migrations=migrations)
