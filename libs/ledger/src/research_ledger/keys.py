"""API keys and what an admin binds to one (`uow.keys`): the keys themselves (`api_keys`, stored
as the SHA-256 of the secret, never the secret), a key's quota overrides (`key_limits`) and the
workspaces it may name (`key_workspaces`).

The gateway makes the secrets and decides what a role may do; this module stores and finds keys.
Issuing and revoking a key write their audit rows here, in the caller's transaction.
"""

from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert

from research_ledger.base import LedgerBase
from research_ledger.catalogue import AuditAction
from research_ledger.source_limits import DEFAULT_WORKSPACE
from research_ledger.tables import ApiKey, KeyLimitsRow, KeyWorkspace


class Keys(LedgerBase):
    """API keys, their quota overrides and their workspaces, in the unit of work's session."""

    async def add(self, key_id: uuid.UUID, *, name: str, role: str, key_hash: str) -> None:
        """Store a new key (its hash) and audit its creation."""
        self.session.add(ApiKey(id=key_id, name=name, role=role, key_hash=key_hash))
        self.audit(
            AuditAction.ADMIN_KEY_CREATED,
            subject_ids={"key_id": key_id},
            payload={"role": role, "name": name},
        )

    async def get(self, key_id: uuid.UUID) -> ApiKey | None:
        """The key `key_id`, revoked or not."""
        return await self.session.get(ApiKey, key_id)

    async def live_by_hash(self, key_hash: str) -> ApiKey | None:
        """The unrevoked key whose stored hash is `key_hash` (the index's lookup), or None."""
        return await self.session.scalar(
            select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))
        )

    async def revoke(self, key_id: uuid.UUID) -> bool:
        """Revoke `key_id` and audit it; False when it was unknown or already revoked."""
        result = await self.session.execute(
            update(ApiKey)
            .where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
            .values(revoked_at=func.now())
            .returning(ApiKey.id)
        )
        revoked = result.scalar_one_or_none() is not None
        if revoked:
            self.audit(AuditAction.ADMIN_KEY_REVOKED, subject_ids={"key_id": key_id})
        return revoked

    async def listing(self) -> list[ApiKey]:
        """Every key, revoked ones too, oldest first."""
        return list(await self.session.scalars(select(ApiKey).order_by(ApiKey.created_at)))

    async def overrides(self, key_id: uuid.UUID) -> KeyLimitsRow | None:
        """The admin's quota overrides of `key_id` (a None column keeps the default), or None."""
        return await self.session.get(KeyLimitsRow, key_id)

    async def override(self, key_id: uuid.UUID, values: dict[str, int | None]) -> None:
        """Set `key_id`'s quota overrides (None = the default); the caller audits the change."""
        statement = insert(KeyLimitsRow).values(key_id=key_id, **values)
        await self.session.execute(
            statement.on_conflict_do_update(
                index_elements=[KeyLimitsRow.key_id], set_={**values, "updated_at": func.now()}
            )
        )

    async def workspaces(self, key_id: uuid.UUID) -> list[str]:
        """The workspaces `key_id` may name, sorted; `default` alone when none was bound."""
        bound = list(
            await self.session.scalars(
                select(KeyWorkspace.workspace)
                .where(KeyWorkspace.key_id == key_id)
                .order_by(KeyWorkspace.workspace)
            )
        )
        return bound or [DEFAULT_WORKSPACE]

    async def bind_workspaces(self, key_id: uuid.UUID, workspaces: list[str]) -> None:
        """Replace the workspaces `key_id` may name; the caller audits the change."""
        await self.session.execute(delete(KeyWorkspace).where(KeyWorkspace.key_id == key_id))
        await self.session.execute(
            insert(KeyWorkspace),
            [{"key_id": key_id, "workspace": w} for w in dict.fromkeys(workspaces)],
        )
