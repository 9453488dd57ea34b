"""How people and clients sign in (`uow.signins`): the console's server-side sessions
(`console_sessions`) and single-use sign-in codes (`console_codes`), and the failed key checks the
gateway throttles (`auth_failures`).

Only digests are stored: a session id's and a code's SHA-256 (the browser's cookie holds the id,
never a key), and a throttled source's SHA-256 (never a presented key's characters). Expired
sessions, old codes and failures past their window are deleted as new ones come.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import uuid
from datetime import timedelta

from sqlalchemy import delete, func, insert, select, update

from research_ledger.base import LedgerBase
from research_ledger.tables import ApiKey, AuthFailure, ConsoleCode, ConsoleSession


def digest(token: str) -> str:
    """The stored form of a session id, a code or a throttled source (SHA-256, hex)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class Signins(LedgerBase):
    """Console sessions, sign-in codes and failed key checks, in the unit of work's session."""

    async def open(self, key_id: uuid.UUID, ttl_s: float) -> str:
        """A new console session of `key_id`; returns its id (the cookie's value)."""
        session_id = secrets.token_urlsafe(32)
        await self.session.execute(
            insert(ConsoleSession).values(
                id_hash=digest(session_id),
                key_id=key_id,
                expires_at=func.now() + timedelta(seconds=ttl_s),
            )
        )
        await self.session.execute(
            delete(ConsoleSession).where(ConsoleSession.expires_at < func.now())
        )
        return session_id

    async def key_of(self, session_id: str) -> ApiKey | None:
        """The live key whose live console session `session_id` is, or None."""
        return await self.session.scalar(
            select(ApiKey)
            .join(ConsoleSession, ConsoleSession.key_id == ApiKey.id)
            .where(
                ConsoleSession.id_hash == digest(session_id),
                ConsoleSession.expires_at > func.now(),
                ApiKey.revoked_at.is_(None),
            )
        )

    async def close(self, session_id: str) -> None:
        """End the console session `session_id` (signing out)."""
        await self.session.execute(
            delete(ConsoleSession).where(ConsoleSession.id_hash == digest(session_id))
        )

    async def issue_code(self, key_id: uuid.UUID, ttl_s: float) -> str:
        """A single-use sign-in code for `key_id`, valid `ttl_s` seconds."""
        code = secrets.token_urlsafe(24)
        await self.session.execute(
            insert(ConsoleCode).values(
                code_hash=digest(code),
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
                ConsoleCode.code_hash == digest(code),
                ConsoleCode.spent_at.is_(None),
                ConsoleCode.expires_at > func.now(),
                ConsoleCode.key_id.in_(select(ApiKey.id).where(ApiKey.revoked_at.is_(None))),
            )
            .values(spent_at=func.now())
            .returning(ConsoleCode.key_id)
        )

    async def failure_wait(self, source: str, *, limit: int, window_s: float) -> int | None:
        """Seconds `source` must wait before its key is checked again — once it failed `limit`
        times within `window_s`, until the oldest of those leaves the window — or None."""
        window = timedelta(seconds=window_s)
        left = await self.session.scalar(
            select(func.extract("epoch", AuthFailure.failed_at + window - func.now()))
            .where(
                AuthFailure.source == digest(source),
                AuthFailure.failed_at > func.now() - window,
            )
            .order_by(AuthFailure.failed_at.desc())
            .offset(limit - 1)
            .limit(1)
        )
        if left is None:
            return None
        return max(1, math.ceil(float(left)))

    async def count_failure(self, source: str, *, window_s: float) -> None:
        """Count one failed key check of `source`, and forget every failure past the window."""
        await self.session.execute(
            delete(AuthFailure).where(
                AuthFailure.failed_at < func.now() - timedelta(seconds=window_s)
            )
        )
        await self.session.execute(insert(AuthFailure).values(source=digest(source)))
