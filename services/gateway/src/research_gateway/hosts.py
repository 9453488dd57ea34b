"""Which `Host` and `Origin` the gateway answers: no DNS rebinding, no cross-site requests.

A web page can rebind its own domain to 127.0.0.1 and then call the gateway from the visitor's
browser as a same-origin page; in open mode (`GATEWAY_AUTH__OPEN`) that is an anonymous admin,
and a body-less admin `POST` is a plain cross-site form request anyway. So every request — each
API route, `/mcp`, the console, `/healthz` — passes `HostGuard` first:

- its `Host` must be allowed: a loopback name (`localhost`, 127.0.0.0/8, `[::1]`, any port),
  `GATEWAY_HOST` when it names one address or name (not `0.0.0.0` / `::`), or one of
  `GATEWAY_ALLOWED_HOSTS` (the public name behind a proxy, `research.example.org`); any other is
  421 Misdirected Request — a rebound page's requests carry the page's own domain;
- a request carrying an `Origin` (a browser's cross-site fetch, any browser `POST`) must come
  from the gateway's own origin (the Origin's scheme is the request's and its `host:port` the
  request's `Host`, default ports spelled out) or from one of `GATEWAY_ALLOWED_HOSTS` on the
  request's scheme and on the port the entry names (none named: that scheme's default port,
  as a browser writes the origin of `https://research.example.org`); any other, `null`
  included, is 403 — another page on this machine (`localhost:3000`), or the allowed name on
  another port or scheme (`http://research.example.org:8081`), is another origin. The request's
  scheme is the one the server saw (uvicorn reads `X-Forwarded-Proto` from trusted proxies).

The CLI, the Python client and MCP clients send no `Origin` and name the host they connect to,
so they pass. `/mcp` is also guarded by the MCP SDK's own transport security, with the same hosts.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_BINDS = ("", "0.0.0.0", "::", "[::]")  # noqa: S104 - recognised, never bound
DEFAULT_PORTS = {"http": 80, "https": 443}


def _split(host: str) -> tuple[str, str | None]:
    """(name, port) of a `Host` value: `127.0.0.1:8080`, `[::1]:8080`, `example.org`."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        return name + "]", rest[1:] if rest.startswith(":") else None
    name, sep, port = host.rpartition(":")
    return (name, port) if sep and port.isdigit() else (host, None)


def is_loopback(name: str) -> bool:
    """Whether `name` (a host name or address, IPv6 in brackets or not) is this machine."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class AllowedHosts:
    """The host names the gateway answers besides loopback ones (lowercase, each optionally
    with `:port`, which then must match too)."""

    public: tuple[str, ...] = ()

    @classmethod
    def of(cls, bind: str, configured: list[str]) -> AllowedHosts:
        """Loopback, the bind address when it names one (`GATEWAY_HOST`), and `configured`
        (`GATEWAY_ALLOWED_HOSTS`)."""
        bind = bind.strip().lower()
        names = list(configured)
        if bind not in WILDCARD_BINDS and not is_loopback(bind):
            names.insert(
                0, f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind
            )  # IPv6 in a Host: [..]
        return cls(tuple(dict.fromkeys(n.strip().lower() for n in names if n.strip())))

    def _public(self, host: str) -> bool:
        name, port = _split(host)
        return any(allowed in (name, f"{name}:{port}") for allowed in self.public)

    def _public_origin(self, name: str, port: int, scheme: str) -> bool:
        """Whether `name` on `port` is an allowed public origin for a request over `scheme`."""
        for allowed in self.public:
            allowed_name, allowed_port = _split(allowed)
            wanted = int(allowed_port) if allowed_port else DEFAULT_PORTS[scheme]
            if allowed_name == name and wanted == port:
                return True
        return False

    def host_allowed(self, host: str | None) -> bool:
        return bool(host) and (is_loopback(_split(host or "")[0]) or self._public(host or ""))

    def origin_allowed(self, origin: str, host: str, scheme: str = "http") -> bool:
        """Whether a request over `scheme` for `host` (already allowed) may come from the page at
        `origin`: same scheme, and the same host and port (see the module docstring)."""
        parts = urlsplit(origin.strip())
        if (
            parts.scheme != scheme
            or scheme not in DEFAULT_PORTS
            or not parts.netloc
            or parts.path not in ("", "/")
        ):
            return False
        origin_name, origin_port = _split(parts.netloc)
        host_name, host_port = _split(host)
        port = int(origin_port) if origin_port else DEFAULT_PORTS[scheme]
        if origin_name == host_name and port == (
            int(host_port) if host_port else DEFAULT_PORTS[scheme]
        ):
            return True
        return self._public_origin(origin_name, port, scheme)

    def transport_security(self) -> TransportSecuritySettings:
        """The same rule for the MCP SDK's own check of `/mcp` (exact names and `name:*`)."""
        hosts = []
        for name in (*LOOPBACK_NAMES, *self.public):
            hosts += (
                [name, f"{name}:*"] if _split(name)[1] is None else [name]
            )  # no port named: any port
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=hosts,
            allowed_origins=[f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")],
        )


class HostGuard:
    """ASGI middleware refusing a foreign `Host` (421) or `Origin` (403) before any route runs."""

    def __init__(self, app: ASGIApp, allowed: AllowedHosts) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan (the gateway serves no websockets)
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host, origin = headers.get("host", ""), headers.get("origin")
        if not self.allowed.host_allowed(host):
            await _answer(
                send,
                421,
                "this gateway does not answer for that Host: use its own address "
                "(loopback, or a name in GATEWAY_ALLOWED_HOSTS)",
            )
            return
        if origin is not None and not self.allowed.origin_allowed(
            origin, host, str(scope.get("scheme", "http"))
        ):
            await _answer(
                send, 403, "cross-origin request refused: the Origin is not this gateway's own"
            )
            return
        await self.app(scope, receive, send)


async def _answer(send: Send, status: int, detail: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps({"detail": detail}).encode()})
