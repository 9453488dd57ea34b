"""Who a request came from, and over which scheme, when reverse proxies stand in front.

A request whose peer is a trusted proxy (`GATEWAY_AUTH__TRUSTED_PROXIES`: addresses or CIDR
networks) is taken to come from the client its `X-Forwarded-For` names — the right-most address
that is not itself a trusted proxy — over the scheme its `X-Forwarded-Proto` names. From any
other peer both headers are ignored (anyone can send them). So the failed-key throttle counts
each client behind a proxy, not the proxy (which would lock out everyone behind it), and the
console's cookie is `Secure` when the browser spoke https to the proxy.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class TrustedProxies:
    networks: tuple[Network, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, entries: Iterable[str]) -> TrustedProxies:
        """From the setting's entries; a malformed one is a start-up error, not a silent skip."""
        return cls(tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries))

    def trusts(self, host: str | None) -> bool:
        found = _address(host) if host else None
        return found is not None and any(found in network for network in self.networks)

    def _forwarded(self, headers: Mapping[str, str], name: str) -> list[str]:
        return [part.strip() for part in headers.get(name, "").split(",") if part.strip()]

    def client(self, peer: str | None, headers: Mapping[str, str]) -> str:
        """The client address: the peer, or — when the peer is a trusted proxy — the right-most
        `X-Forwarded-For` address not itself a trusted proxy."""
        if not self.trusts(peer):
            return peer or "unknown"
        for hop in reversed(self._forwarded(headers, "x-forwarded-for")):
            if _address(hop) is None:
                break  # a malformed hop: nothing to the left of it can be believed
            if not self.trusts(hop):
                return hop
        return peer or "unknown"

    def scheme(self, peer: str | None, headers: Mapping[str, str], own: str) -> str:
        """`own` (the scheme the gateway itself saw), or a trusted proxy's `X-Forwarded-Proto`."""
        if self.trusts(peer):
            forwarded = self._forwarded(headers, "x-forwarded-proto")
            if forwarded and forwarded[0].lower() in ("http", "https"):
                return forwarded[0].lower()
        return own


def proxies_of(app_state: Any) -> TrustedProxies:
    found = getattr(app_state, "proxies", None)
    return found if isinstance(found, TrustedProxies) else TrustedProxies()
