"""API keys: issued once, stored as SHA-256 hashes, each with one role: reader < researcher < admin.

A caller presents the key in `X-API-Key: <key>` or `Authorization: Bearer <key>`. Every API
route declares the least role it needs with `require(role)` (reads: reader, submissions:
researcher, control / limits / keys: admin); a higher role passes too:

    @router.get("/things/{id}", responses=AUTH_RESPONSES)
    async def get_thing(id: uuid.UUID, uow: Reading, caller: Reader) -> ...

- no key, an unknown or a revoked key → 401 (`WWW-Authenticate: Bearer`);
- a valid key whose role is too low → 403 (audited with the key id);
- a failed key check from a source address or with a key prefix already past its limit of
  failures → 429 with `Retry-After` (`throttle.py`, `Guard.count_failure`; the console's sign-in
  and `/mcp` count the same way); a valid key is never refused by the throttle, so nobody can
  lock a user out by sending bad keys from the same address. The failures are counted in
  PostgreSQL (every replica sees them) per client address — behind a trusted proxy, the client
  its `X-Forwarded-For` names (`proxies.py`).

A browser signed in to the console carries a session cookie instead (`signins.py`): the session
stands for its key, so the browser's fetch / EventSource calls pass the same role checks.

The key is hashed and the stored hash compared with `hmac.compare_digest`; only the key's id
ever reaches logs and audit rows, never the key. `GATEWAY_AUTH__OPEN=true` (an operator's
choice, loopback binds only, see `main.py`) lets requests without a key through as an
anonymous admin.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from research_gateway.deps import SERVICE, ledger_of
from research_gateway.proxies import TrustedProxies
from research_gateway.signins import SESSION_COOKIE
from research_gateway.throttle import FailedAuthThrottle
from research_ledger import AuditAction, Ledger, UnitOfWork
from research_privacy.boundary import person_text

KEY_PREFIX_CHARS = (
    12  # failures are also counted per presented key prefix (a guesser rotating addresses)
)

Role = Literal["reader", "researcher", "admin"]
ROLES: tuple[Role, ...] = (
    "reader",
    "researcher",
    "admin",
)  # each role may do what the ones before it may
RANK: dict[str, int] = {role: rank for rank, role in enumerate(ROLES)}
KEY_PREFIX = "rek_"

# The status codes `require` answers with, for a route's `responses=` (the OpenAPI document).
AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "no API key, or an unknown or revoked one (`WWW-Authenticate: Bearer`)"},
    403: {
        "description": "a valid API key whose role is too low for this route, or a request from another site's "
        "page (its `Origin` is not this gateway's own)"
    },
    429: {
        "description": "a failed key check from an address (or with a key prefix) past its limit of failures: "
        "retry after `Retry-After` seconds (a valid key is never refused)",
        "headers": {
            "Retry-After": {
                "description": "seconds to wait",
                "schema": {"type": "integer", "minimum": 1},
            }
        },
    },
}

_header = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="An API key (`research-engine keys create`)."
)
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


# Who a keyless request is when an operator turned open mode on: an anonymous admin.
OPEN_CALLER = Caller(uuid.UUID(int=0), "admin", "open mode")


@dataclass
class Guard:
    """The gateway's key-check state (`app.state.guard`): open mode, the failed-attempt throttle
    and the proxies whose forwarded client address it believes."""

    open: bool = False
    throttle: FailedAuthThrottle = field(default_factory=FailedAuthThrottle)
    proxies: TrustedProxies = field(default_factory=TrustedProxies)

    def client_of(self, request: Request) -> str:
        """The address a request came from (its forwarded client behind a trusted proxy)."""
        peer = request.client.host if request.client else None
        return self.proxies.client(peer, request.headers)

    def scheme_of(self, request: Request) -> str:
        """The scheme the client used (its proxy's `X-Forwarded-Proto` behind a trusted one)."""
        peer = request.client.host if request.client else None
        return self.proxies.scheme(peer, request.headers, request.url.scheme)

    async def count_failure(self, ledger: Ledger, client: str, secret: str | None) -> int | None:
        """Count one failed key check of `client` (an address) presenting `secret` (or no key);
        the seconds to wait when the address or the key's prefix was already past its limit,
        else None. Only failures are counted: a valid key never reaches this. In a unit of work
        of its own, so the count stays whatever the request's transaction does."""
        sources = [f"client:{client}"] + ([f"key:{secret[:KEY_PREFIX_CHARS]}"] if secret else [])
        async with ledger.unit_of_work(service=SERVICE) as uow:
            waits = [
                w
                for w in [await self.throttle.retry_after(uow, s) for s in sources]
                if w is not None
            ]
            for source in sources:
                await self.throttle.failed(uow, source)
        return max(waits) if waits else None


_CLOSED = Guard()  # an app that set no guard (a router mounted elsewhere) is closed, never open


@dataclass(frozen=True)
class KeyListing:
    key_id: uuid.UUID
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


class ApiKeys:
    """The key store (`uow.keys`): makes the secrets, checks a presented one."""

    def __init__(self, uow: UnitOfWork) -> None:
        self.keys = uow.keys

    async def issue(self, role: str, name: str = "") -> tuple[uuid.UUID, str]:
        """Create a key of `role`; returns (key id, the key) — the key is never retrievable again."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        key_id = uuid.uuid4()
        name = person_text(
            name
        )  # a label a person typed, often a person's name: the privacy boundary applies
        await self.keys.add(key_id, name=name, role=role, key_hash=hash_key(secret))
        return key_id, secret

    async def identify(self, secret: str) -> Caller | None:
        """The live key matching `secret`, or None.

        The lookup is by the key's SHA-256 (what the index holds), so its timing says nothing
        about the key; the stored hash is then confirmed with a constant-time compare.
        """
        presented = hash_key(secret)
        row = await self.keys.live_by_hash(presented)
        if row is None or not hmac.compare_digest(row.key_hash.encode(), presented.encode()):
            return None
        return Caller(row.id, row.role, row.name)

    async def revoke(self, key_id: uuid.UUID) -> bool:
        """Revoke `key_id` (audited); False when it was unknown or already revoked."""
        return await self.keys.revoke(key_id)

    async def listing(self) -> list[KeyListing]:
        rows = await self.keys.listing()
        return [KeyListing(r.id, r.name, r.role, r.created_at, r.revoked_at) for r in rows]


def _refused(detail: str) -> HTTPException:
    return HTTPException(
        status.HTTP_401_UNAUTHORIZED, detail, headers={"WWW-Authenticate": "Bearer"}
    )


def too_many_failures(wait: int) -> HTTPException:
    """The 429 of a failed key check past the throttle's limit."""
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS,
        f"too many failed API-key checks from this address; retry in {wait} s",
        headers={"Retry-After": str(wait)},
    )


async def _failed(request: Request, guard: Guard, secret: str | None, detail: str) -> HTTPException:
    """The answer to a failed key check, counted by the throttle: a 401, or a 429 with
    `Retry-After` once the address or the key prefix is past its limit."""
    wait = await guard.count_failure(ledger_of(request), guard.client_of(request), secret)
    return _refused(detail) if wait is None else too_many_failures(wait)


async def _console_caller(uow: UnitOfWork, session_id: str) -> Caller | None:
    row = await uow.signins.key_of(session_id)
    return None if row is None else Caller(row.id, row.role, row.name)


def route_template(request: Request) -> str:
    """The route's path template (`/api/research/v1/source-lists/limits/{workspace}`), never the
    raw path, which may carry a name a caller typed; what an audit row of a denial stores."""
    return str(getattr(request.scope.get("route"), "path", "") or "(no route)")


def require(role: Role) -> Callable[..., Awaitable[Caller]]:
    """A dependency admitting keys of `role` or a higher one (401 / 403 as the module says)."""
    if role not in RANK:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")

    async def caller(
        request: Request,
        header_key: Annotated[str | None, Depends(_header)],
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> Caller:
        guard: Guard = getattr(request.app.state, "guard", _CLOSED)
        secret = header_key or (bearer.credentials if bearer else None)
        console = None if secret else request.cookies.get(SESSION_COOKIE)
        if not secret and not console and guard.open:
            return OPEN_CALLER
        if not secret and not console:
            raise await _failed(request, guard, None, "an API key is required")
        ledger = ledger_of(request)
        async with ledger.unit_of_work(service=SERVICE) as uow:
            found = (
                await ApiKeys(uow).identify(secret)
                if secret
                else await _console_caller(uow, console or "")
            )
        if found is None:
            detail = "unknown or revoked API key" if secret else "the console session has ended"
            raise await _failed(request, guard, secret or console, detail)
        if RANK.get(found.role, -1) >= RANK[role]:
            return found
        async with ledger.unit_of_work(service=SERVICE) as uow:
            uow.audit(
                AuditAction.ADMIN_DENIED,
                subject_ids={"key_id": found.key_id},
                payload={
                    "role": found.role,
                    "path": route_template(request),
                    "method": request.method,
                },
            )
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"this route needs the {role} role (this key: {found.role})"
        )

    caller.__name__ = f"require_{role}"
    return caller


Reader = Annotated[Caller, Depends(require("reader"))]
Researcher = Annotated[Caller, Depends(require("researcher"))]
Admin = Annotated[Caller, Depends(require("admin"))]


def require_role(*roles: Role) -> Callable[..., Awaitable[Caller]]:
    """The earlier spelling: the least of `roles` (use `require(role)` or `Reader` / `Researcher` / `Admin`)."""
    return require(min(roles, key=RANK.__getitem__))
