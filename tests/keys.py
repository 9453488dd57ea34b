"""API keys for tests: every gateway API route needs one (`research_gateway.auth.require`).

    from tests.keys import api_key, auth
    key = await api_key(sessions, "reader")
    await client.get(f"{API}/claims/{claim_id}", headers=auth(key))

or the `api_keys` fixture (role → headers): `headers=api_keys["researcher"]`.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_gateway.auth import ROLES, ApiKeys, Role
from research_ledger import Ledger


async def api_key(
    sessions: async_sessionmaker[AsyncSession], role: Role, name: str = "test"
) -> str:
    """Issue a live key of `role` (committed) and return the key itself."""
    async with Ledger(sessions).unit_of_work(service="gateway") as uow:
        _, secret = await ApiKeys(uow).issue(role, name=f"{name} {role}")
    return secret


def auth(key: str) -> dict[str, str]:
    """The request headers carrying `key`."""
    return {"X-API-Key": key}


async def headers_by_role(sessions: async_sessionmaker[AsyncSession]) -> dict[Role, dict[str, str]]:
    """One fresh key per role, as request headers."""
    return {role: auth(await api_key(sessions, role)) for role in ROLES}


async def bind_workspaces(
    sessions: async_sessionmaker[AsyncSession], headers: dict[str, str], *workspaces: str
) -> None:
    """Let the key in `headers` name `workspaces` besides `default` (an admin's binding)."""
    async with Ledger(sessions).unit_of_work(service="gateway") as uow:
        caller = await ApiKeys(uow).identify(headers["X-API-Key"])
        assert caller is not None
        await uow.keys.bind_workspaces(caller.key_id, ["default", *workspaces])
