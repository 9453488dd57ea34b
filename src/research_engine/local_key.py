"""The local admin key: created once by `research-engine up`, kept in the data folder, read by the CLI.

Like a notebook server's token: the operator starting the embedded stack gets a working admin
key (and a console URL carrying a single-use sign-in code for it, never the key) with nothing
to type. The key lives in
`<data_dir>/admin.key`, file mode 0600; the database holds only its hash, as for every key. If
the file is missing, or its key is no longer a live admin key in this database (a fresh or an
external database, a revoked key), a new key is issued and the file replaced.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

KEY_FILE = "admin.key"
KEY_NAME = "local admin (research-engine up)"


def key_path(data_dir: Path) -> Path:
    return data_dir / KEY_FILE


def read_local_admin_key(data_dir: Path) -> str | None:
    """The key stored in `data_dir`, or None when there is none (the CLI's way to find it)."""
    path = key_path(data_dir)
    if not path.is_file():
        return None
    return path.read_text().strip() or None


def _write_private(path: Path, secret: str) -> None:
    """Write `secret` readable by the owner only (0600), never briefly wider."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    os.chmod(partial, 0o600)  # in case a stale file with wider bits existed
    os.replace(partial, path)


async def _live_or_issue(database_url: str, stored: str | None) -> str | None:
    """None when `stored` is a live admin key; otherwise a newly issued admin key."""
    from research_gateway.auth import ApiKeys
    from research_ledger import Ledger
    from research_platform.db import create_engine, session_factory

    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    try:
        async with Ledger(session_factory(engine)).unit_of_work(service="cli") as uow:
            keys = ApiKeys(uow.session)
            if stored is not None:
                found = await keys.identify(stored)
                if found is not None and found.role == "admin":
                    return None
            _, secret = await keys.issue("admin", KEY_NAME)
            return secret
    finally:
        await engine.dispose()


def ensure_local_admin_key(data_dir: Path, database_url: str) -> tuple[str, bool]:
    """The local admin key of `data_dir` for `database_url`, and whether it was created just now."""
    stored = read_local_admin_key(data_dir)
    issued = asyncio.run(_live_or_issue(database_url, stored))
    if issued is None:
        assert stored is not None
        os.chmod(key_path(data_dir), 0o600)
        return stored, False
    _write_private(key_path(data_dir), issued)
    return issued, True


async def _issue_code(database_url: str, secret: str, ttl_s: float) -> str | None:
    from research_gateway.auth import ApiKeys
    from research_gateway.signins import ConsoleSessions
    from research_ledger import Ledger
    from research_platform.db import create_engine, session_factory

    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    try:
        async with Ledger(session_factory(engine)).unit_of_work(service="cli") as uow:
            found = await ApiKeys(uow.session).identify(secret)
            if found is None:
                return None
            return await ConsoleSessions(uow.session).issue_code(found.key_id, ttl_s)
    finally:
        await engine.dispose()


def console_sign_in_url(gateway_url: str, database_url: str, secret: str, ttl_s: float) -> str:
    """The console URL signing a browser in as `secret`'s key: a single-use code that expires in
    `ttl_s` seconds (the key itself never travels in a URL)."""
    code = asyncio.run(_issue_code(database_url, secret, ttl_s))
    if code is None:
        raise RuntimeError("the key is not live in this database: no sign-in code issued")
    return f"{gateway_url}/?code={code}"
