"""What a key may do and what it uses: its own view, and the admin's per-key settings.

    GET /me                          reader  the key's id, role, limits (none for an admin: exempt),
                                             use (runs in flight per kind, submissions in the last
                                             hour, watched claims) and the workspaces it may name
    GET|PUT /keys/{key_id}/limits    admin   overrides of a key's quotas (`quotas.py`; null = default)
    GET|PUT /keys/{key_id}/workspaces admin  the workspaces a researcher key may name

A researcher key names only the workspaces it is bound to (`key_workspaces`, `uow.keys`; a key
with no binding has `default`); an admin key names any. With
`GATEWAY_LIMITS__DECLARED_WORKSPACES_ONLY` a workspace without a limits row of its own is a 404;
otherwise it gets the `default` workspace's limits (`uow.limits`,
`research_ledger.source_limits`). Each change is audited with the
admin's key id.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, HTTPException, Request, status
from pydantic import BaseModel, ConfigDict, Field

from research_gateway.auth import AUTH_RESPONSES, Admin, Caller, Reader
from research_gateway.deps import API, SERVICE, Current, LedgerDoor
from research_gateway.quotas import KINDS, KeyQuotas, Quotas
from research_gateway.storable import Slug
from research_ledger import AuditAction, UnitOfWork
from research_platform.settings import GatewayLimitsSettings

router = APIRouter(prefix=API, tags=["keys"], responses=AUTH_RESPONSES)
NO_KEY: dict[int | str, dict[str, Any]] = {404: {"description": "no such key"}}
MAX_WORKSPACES = 100


class Limits(BaseModel):
    runs_in_flight: int = Field(description="Runs of one kind this key may have in flight.")
    submissions_per_hour: int = Field(description="Expensive submissions per hour, all kinds.")
    watched_claims: int = Field(description="Watched claims this key may hold.")


class Use(BaseModel):
    in_flight: dict[str, int] = Field(description="Runs in flight per kind: " + ", ".join(KINDS))
    submissions_last_hour: int
    watched_claims: int


class Me(BaseModel):
    key_id: uuid.UUID
    name: str
    role: str
    exempt: bool = Field(description="An admin key: no quota applies (its use is still counted).")
    limits: Limits | None = Field(description="This key's quotas; null for an admin key.")
    use: Use
    workspaces: list[str] | None = Field(
        description="The workspaces this key may name; null for an admin key (any)."
    )


class LimitsOverride(BaseModel):
    """An admin's values for one key; null (or absent) keeps the default of `GATEWAY_LIMITS__…`."""

    model_config = ConfigDict(extra="forbid")

    runs_in_flight: int | None = Field(default=None, ge=0, le=10_000)
    submissions_per_hour: int | None = Field(default=None, ge=0, le=1_000_000)
    watched_claims: int | None = Field(default=None, ge=0, le=1_000_000)


class KeyLimitsView(BaseModel):
    key_id: uuid.UUID
    overrides: LimitsOverride
    limits: Limits = Field(description="What applies: the overrides over the defaults.")


class Workspaces(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workspaces: list[Slug] = Field(min_length=1, max_length=MAX_WORKSPACES)


async def require_workspace(
    uow: UnitOfWork, caller: Caller, workspace: str, limits: GatewayLimitsSettings
) -> None:
    """403 unless `caller` may name `workspace`; 404 when workspaces must be declared and this
    one has no limits row."""
    if caller.role != "admin":
        bound = await uow.keys.workspaces(caller.key_id)
        if workspace not in bound:
            raise HTTPException(
                status.HTTP_403_FORBIDDEN,
                f"this key may not name workspace {workspace!r} (it may name: {', '.join(bound)}); "
                "an admin binds keys to workspaces",
            )
    if limits.declared_workspaces_only and not await uow.limits.declared(workspace):
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            f"no workspace {workspace!r}: an admin declares it by setting its limits",
        )


async def _known(uow: UnitOfWork, key_id: uuid.UUID) -> None:
    """404 unless the ledger holds the key `key_id` (revoked or not)."""
    if await uow.keys.get(key_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no key {key_id}")


@router.get("/me", response_model=Me)
async def me(ledger: LedgerDoor, caller: Reader, quotas: KeyQuotas) -> Me:
    """Who this key is, what it may ask and what it uses now."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        use = await quotas.use(uow, caller.key_id)
        exempt = caller.role == "admin"
        limits = None if exempt else Limits(**vars(await quotas.limits(uow, caller.key_id)))
        workspaces = None if exempt else await uow.keys.workspaces(caller.key_id)
    return Me(
        key_id=caller.key_id,
        name=caller.name,
        role=caller.role,
        exempt=exempt,
        limits=limits,
        use=Use(**vars(use)),
        workspaces=workspaces,
    )


async def _limits_view(uow: UnitOfWork, quotas: Quotas, key_id: uuid.UUID) -> KeyLimitsView:
    return KeyLimitsView(
        key_id=key_id,
        overrides=LimitsOverride(**await quotas.overrides(uow, key_id)),
        limits=Limits(**vars(await quotas.limits(uow, key_id))),
    )


@router.get("/keys/{key_id}/limits", response_model=KeyLimitsView, responses=NO_KEY)
async def get_key_limits(
    key_id: uuid.UUID, uow: Current, caller: Admin, quotas: KeyQuotas
) -> KeyLimitsView:
    """A key's quota overrides and the limits that apply to it (admin only)."""
    await _known(uow, key_id)
    return await _limits_view(uow, quotas, key_id)


@router.put("/keys/{key_id}/limits", response_model=KeyLimitsView, responses=NO_KEY)
async def set_key_limits(
    key_id: uuid.UUID, body: LimitsOverride, ledger: LedgerDoor, caller: Admin, quotas: KeyQuotas
) -> KeyLimitsView:
    """Override a key's quotas (admin only): a bench or a bulk import runs under its own values."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        await _known(uow, key_id)
        await uow.keys.override(key_id, body.model_dump())
        uow.audit(
            AuditAction.ADMIN_KEY_LIMITS_SET,
            subject_ids={"key_id": caller.key_id, "target_key_id": key_id},
            payload={"overrides": body.model_dump()},
        )
        return await _limits_view(uow, quotas, key_id)


@router.get("/keys/{key_id}/workspaces", response_model=Workspaces, responses=NO_KEY)
async def get_key_workspaces(key_id: uuid.UUID, uow: Current, caller: Admin) -> Workspaces:
    """The workspaces a key may name (admin only; `default` when none was bound)."""
    await _known(uow, key_id)
    return Workspaces(workspaces=await uow.keys.workspaces(key_id))


@router.put("/keys/{key_id}/workspaces", response_model=Workspaces, responses=NO_KEY)
async def set_key_workspaces(
    key_id: uuid.UUID, body: Workspaces, ledger: LedgerDoor, caller: Admin
) -> Workspaces:
    """Bind a key to the workspaces it may name (admin only; replaces the earlier binding)."""
    async with ledger.unit_of_work(service=SERVICE) as uow:
        await _known(uow, key_id)
        await uow.keys.bind_workspaces(key_id, list(body.workspaces))
        uow.audit(
            AuditAction.ADMIN_KEY_WORKSPACES_SET,
            subject_ids={"key_id": caller.key_id, "target_key_id": key_id},
            payload={"workspaces": list(body.workspaces)},
        )
        return Workspaces(workspaces=await uow.keys.workspaces(key_id))


def limits_of(request: Request) -> GatewayLimitsSettings:
    """The gateway's `GATEWAY_LIMITS__…` (set in `main.create_app`)."""
    return getattr(request.app.state, "limits", None) or GatewayLimitsSettings()
