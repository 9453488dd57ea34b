"""The local admin key of `research-engine up`: created once, mode 0600, live in the database,
replaced when it is no longer a live admin key, found by the CLI in the data folder (with a
console URL carrying a single-use code, never the key)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.harness.servers import Servers
from research_engine.cli import app
from research_engine.local_key import ensure_local_admin_key, key_path
from research_gateway.auth import ApiKeys, Caller
from research_ledger import UnitOfWork
from research_platform.db import create_engine, session_factory

pytestmark = pytest.mark.integration


def _identify(database_url: str, secret: str, revoke: bool = False) -> Caller | None:
    async def _run() -> Caller | None:
        engine = create_engine(database_url, pool_size=1, max_overflow=0)
        try:
            async with session_factory(engine)() as session, session.begin():
                found = await ApiKeys(UnitOfWork(session, service="gateway")).identify(secret)
                if found is not None and revoke:
                    await ApiKeys(UnitOfWork(session, service="gateway")).revoke(found.key_id)
                return found
        finally:
            await engine.dispose()

    return asyncio.run(_run())


def test_created_once_private_and_replaced_when_revoked(servers: Servers, tmp_path: Path) -> None:
    key, created = ensure_local_admin_key(tmp_path, servers.database_url)
    assert created and key.startswith("rek_")
    assert stat.S_IMODE(key_path(tmp_path).stat().st_mode) == 0o600
    caller = _identify(servers.database_url, key)
    assert caller is not None and caller.role == "admin"
    assert ensure_local_admin_key(tmp_path, servers.database_url) == (
        key,
        False,
    )  # the second start keeps it

    _identify(servers.database_url, key, revoke=True)
    replaced, created = ensure_local_admin_key(tmp_path, servers.database_url)
    assert created and replaced != key and key_path(tmp_path).read_text().strip() == replaced
    assert stat.S_IMODE(key_path(tmp_path).stat().st_mode) == 0o600


def test_the_cli_finds_the_key_in_the_data_folder(servers: Servers, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["keys", "local", "--data-dir", str(tmp_path)]).exit_code == 1
    key, _ = ensure_local_admin_key(tmp_path, servers.database_url)
    shown = runner.invoke(
        app,
        ["keys", "local", "--data-dir", str(tmp_path)],
        env={"DATABASE_URL": servers.database_url},
    )
    assert shown.exit_code == 0 and key in shown.output, shown.output
    console = next(line for line in shown.output.splitlines() if line.startswith("console"))
    # the console URL carries a single-use sign-in code, never the key itself
    assert "/?code=" in console and key not in console and "key=" not in console
