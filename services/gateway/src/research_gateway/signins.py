"""The console's sign-ins: server-side sessions and single-use sign-in codes.

A browser signs in by posting a key to `/sign-in`, or by opening the URL `research-engine up`
prints: `/?code=<code>`, a single-use code that expires in minutes (`console_code_ttl_s`) and is
spent on first use. Either way the gateway opens a session: the browser's cookie holds the
session's id (256-bit random), never the API key, and the database holds only the id's SHA-256
(`console_sessions`), so neither a stolen cookie jar nor a copy of the database yields a key. A
session ends when it expires, when the browser signs out, or when its key is revoked. A key in
the URL (`/?key=`) no longer signs anyone in.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import timedelta

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from research_ledger.tables import ApiKey, ConsoleCode, ConsoleSession

# The cookie holding a console session id (HttpOnly, SameSite=Strict; set by `console.pages`).
SESSION_COOKIE = "research_console_session"
# Where earlier versions kept the raw API key: never read; deleted when a browser presents it,
# which signs that browser out once.
OLD_KEY_COOKIE = "research_console_key"


def _hashed(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class ConsoleSessions:
    """Console sessions and sign-in codes, in the caller's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def open(self, key_id: uuid.UUID, ttl_s: float) -> str:
        """A new session of `key_id`; returns its id (the cookie's value)."""
        session_id = secrets.token_urlsafe(32)
        await self.session.execute(
            insert(ConsoleSession).values(
                id_hash=_hashed(session_id),
                key_id=key_id,
                expires_at=func.now() + timedelta(seconds=ttl_s),
            )
        )
        await self.session.execute(
            delete(ConsoleSession).where(ConsoleSession.expires_at < func.now())
        )
        return session_id

    async def key_of(self, session_id: str) -> ApiKey | None:
        """The live key whose live session `session_id` is, or None."""
        return await self.session.scalar(
            select(ApiKey)
            .join(ConsoleSession, ConsoleSession.key_id == ApiKey.id)
            .where(
                ConsoleSession.id_hash == _hashed(session_id),
                ConsoleSession.expires_at > func.now(),
                ApiKey.revoked_at.is_(None),
            )
        )

    async def close(self, session_id: str) -> None:
        await self.session.execute(
            delete(ConsoleSession).where(ConsoleSession.id_hash == _hashed(session_id))
        )

    async def issue_code(self, key_id: uuid.UUID, ttl_s: float) -> str:
        """A single-use sign-in code for `key_id`, valid `ttl_s` seconds."""
        code = secrets.token_urlsafe(24)
        await self.session.execute(
            insert(ConsoleCode).values(
                code_hash=_hashed(code),
                key_id=key_id,
                expires_at=func.now() + timedelta(seconds=ttl_s),
            )
        )
        await self.session.execute(
            delete(ConsoleCode).where(ConsoleCode.expires_at < func.now() - timedelta(days=1))
        )
        return code

    async def spend_code(self, code: str) -> uuid.UUID | None:
        """The key `code` signs in, spending it; None when it is unknown, spent or expired, or
        its key was revoked."""
        return await self.session.scalar(
            update(ConsoleCode)
            .where(
                ConsoleCode.code_hash == _hashed(code),
                ConsoleCode.spent_at.is_(None),
                ConsoleCode.expires_at > func.now(),
                ConsoleCode.key_id.in_(select(ApiKey.id).where(ApiKey.revoked_at.is_(None))),
            )
            .values(spent_at=func.now())
            .returning(ConsoleCode.key_id)
        )
