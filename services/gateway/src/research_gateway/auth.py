"""API keys: issued once, stored as SHA-256 hashes, each with one role (admin / researcher / reader).

A caller presents the key in `X-API-Key: <key>` or `Authorization: Bearer <key>`.
`require_role("admin")` is the FastAPI dependency of the admin routes: no key, an unknown or
a revoked key → 401; a key of another role → 403 (audited with the key id). Only the key's
id ever reaches logs and audit rows, never the key.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_gateway.deps import SERVICE, Session
from research_ledger import AuditAction, audit
from research_platform.models import ApiKey

ROLES = ("admin", "researcher", "reader")
KEY_PREFIX = "rek_"

_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key (`research-engine keys create`).")
_bearer = HTTPBearer(auto_error=False, description="The same API key as a bearer token.")


def hash_key(secret: str) -> str:
    """The stored form of a key (keys are 256-bit random, so a plain SHA-256 is enough)."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Caller:
    """Who called: the key's id, its role and its label."""

    key_id: uuid.UUID
    role: str
    name: str


@dataclass(frozen=True)
class KeyListing:
    key_id: uuid.UUID
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


class ApiKeys:
    """The key store, in the caller's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def issue(self, role: str, name: str = "") -> tuple[uuid.UUID, str]:
        """Create a key of `role`; returns (key id, the key) — the key is never retrievable again."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        key_id = uuid.uuid4()
        self.session.add(ApiKey(id=key_id, name=name, role=role, key_hash=hash_key(secret)))
        audit.record(self.session, AuditAction.ADMIN_KEY_CREATED, service=SERVICE,
                     subject_ids={"key_id": key_id}, payload={"role": role, "name": name})
        return key_id, secret

    async def identify(self, secret: str) -> Caller | None:
        """The live key matching `secret`, or None."""
        row = await self.session.scalar(
            select(ApiKey).where(ApiKey.key_hash == hash_key(secret), ApiKey.revoked_at.is_(None))
        )
        return Caller(row.id, row.role, row.name) if row is not None else None

    async def revoke(self, key_id: uuid.UUID) -> bool:
        result = await self.session.execute(
            update(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None)).values(revoked_at=func.now()).returning(ApiKey.id)
        )
        revoked = result.scalar_one_or_none() is not None
        if revoked:
            audit.record(self.session, AuditAction.ADMIN_KEY_REVOKED, service=SERVICE, subject_ids={"key_id": key_id})
        return revoked

    async def listing(self) -> list[KeyListing]:
        rows = await self.session.scalars(select(ApiKey).order_by(ApiKey.created_at))
        return [KeyListing(r.id, r.name, r.role, r.created_at, r.revoked_at) for r in rows]


def require_role(*roles: str) -> Callable[..., Awaitable[Caller]]:
    """A dependency admitting only keys of `roles` (401 without a valid key, 403 for another role)."""

    async def caller(
        request: Request,
        session: Session,
        header_key: Annotated[str | None, Depends(_header)],
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> Caller:
        secret = header_key or (bearer.credentials if bearer else None)
        if not secret:
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "an API key is required", headers={"WWW-Authenticate": "Bearer"})
        async with session.begin():
            found = await ApiKeys(session).identify(secret)
            if found is None:
                raise HTTPException(status.HTTP_401_UNAUTHORIZED, "unknown or revoked API key", headers={"WWW-Authenticate": "Bearer"})
            if found.role in roles:
                return found
            audit.record(
                session,
                AuditAction.ADMIN_DENIED,
                service=SERVICE,
                subject_ids={"key_id": found.key_id},
                payload={"role": found.role, "path": request.url.path, "method": request.method},
            )
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"this route needs the {' or '.join(roles)} role")

    return caller
