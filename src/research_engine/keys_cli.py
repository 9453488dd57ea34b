"""`research-engine keys`: issue, list and revoke API keys (stored hashed; a key is shown once).

    research-engine keys create --role admin --name ops   # prints the key once
    research-engine keys list
    research-engine keys revoke <key-id>
    research-engine keys local                           # the local admin key `up` stored,
                                                         # and a single-use console sign-in URL

Uses `DATABASE_URL`, or the embedded Postgres under `--data-dir` (started if needed).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from research_platform.settings import get_settings

keys_app = typer.Typer(
    help="Issue, list and revoke API keys (roles: admin, researcher, reader).", no_args_is_help=True
)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Embedded servers' data folder.")]
Role = Literal["admin", "researcher", "reader"]


def _database_url(data_dir: Path | None) -> str:
    from research_engine.stack import ensure_embedded_database

    return ensure_embedded_database((data_dir or get_settings().data_dir).resolve())


def _with_keys(url: str, work: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run `work(ApiKeys)` in one unit of work of the ledger (it commits once)."""
    from research_gateway.auth import ApiKeys
    from research_ledger import Ledger
    from research_platform.db import create_engine, session_factory

    async def _run() -> Any:
        engine = create_engine(url, pool_size=1, max_overflow=0)
        try:
            async with Ledger(session_factory(engine)).unit_of_work(service="gateway") as uow:
                return await work(ApiKeys(uow))
        finally:
            await engine.dispose()

    return asyncio.run(_run())


@keys_app.command()
def create(
    role: Annotated[Role, typer.Option("--role", help="admin, researcher or reader.")],
    name: Annotated[
        str, typer.Option("--name", help="A label for the key (who or what uses it).")
    ] = "",
    data_dir: DataDir = None,
) -> None:
    """Create a key and print it — this is the only time it is shown."""
    key_id, secret = _with_keys(_database_url(data_dir), lambda keys: keys.issue(role, name))
    typer.echo(f"key id  {key_id}\nrole    {role}\nkey     {secret}")
    typer.echo("Store the key now: only its hash is kept. Send it as `X-API-Key: <key>`.", err=True)


@keys_app.command("list")
def list_keys(data_dir: DataDir = None) -> None:
    """Every key with its id, role, label and whether it is revoked (never the key itself)."""
    listing = _with_keys(_database_url(data_dir), lambda keys: keys.listing())
    if not listing:
        typer.echo("no API keys; create one with `research-engine keys create --role admin`")
        return
    for key in listing:
        state = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
        typer.echo(
            f"{key.key_id}  {key.role:<10}  {state:<24}  {key.created_at:%Y-%m-%d %H:%M}  {key.name}"
        )


@keys_app.command()
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `keys list`).")],
    data_dir: DataDir = None,
) -> None:
    """Revoke a key; requests with it are refused (401) from now on."""
    try:
        parsed = uuid.UUID(key_id)
    except ValueError as exc:
        raise typer.BadParameter(f"not a key id: {key_id}") from exc
    if not _with_keys(_database_url(data_dir), lambda keys: keys.revoke(parsed)):
        typer.echo(f"no active key {parsed}", err=True)
        raise typer.Exit(1)
    typer.echo(f"revoked {parsed}")


@keys_app.command("local")
def local(data_dir: DataDir = None) -> None:
    """Print the local admin key `research-engine up` stored in the data folder (and its console URL)."""
    from research_engine.local_key import key_path, read_local_admin_key

    folder = (data_dir or get_settings().data_dir).resolve()
    secret = read_local_admin_key(folder)
    if secret is None:
        typer.echo(f"no local admin key in {folder}: `research-engine up` creates one", err=True)
        raise typer.Exit(1)
    from research_engine.local_key import console_sign_in_url

    settings = get_settings()
    typer.echo(f"key      {secret}\nfile     {key_path(folder)}")
    url = console_sign_in_url(
        f"http://127.0.0.1:{settings.gateway_port}",
        _database_url(folder),
        secret,
        settings.gateway_auth.console_code_ttl_s,
    )
    typer.echo(f"console  {url}  (a single-use sign-in code: expires in minutes)")
