"""The gateway's composition root: what the HTTP app is built from, out of the settings it was
handed — the key check (open mode refused off loopback), the allowed hosts, the console's and
the edge's groups — with the installation's secret installed for audit digests and task ids.

    deps = bootstrap(settings)   # in `create_app`, before any route is mounted
"""

from __future__ import annotations

from dataclasses import dataclass

from research_gateway.auth import Guard
from research_gateway.hosts import AllowedHosts, is_loopback
from research_gateway.proxies import TrustedProxies
from research_gateway.settings import ConsoleSettings, EdgeSettings, GatewaySettings
from research_gateway.throttle import FailedAuthThrottle
from research_platform import installation
from research_platform.installation import installation_secret
from research_platform.settings import Settings


@dataclass(frozen=True)
class Deps:
    """What the gateway app is built from."""

    settings: Settings
    guard: Guard  # the key check: open mode, the failed-key throttle, the trusted proxies
    allowed: AllowedHosts  # the `Host` names (and the MCP transport's) a request may carry
    console: ConsoleSettings  # the web console's group (Grafana links)
    edge: EdgeSettings  # the body cap, stream lifetime and caps, the export time cap


def guard_for(settings: Settings) -> Guard:
    """The key-check state; refuses open mode unless the gateway binds a loopback address."""
    auth = settings.gateway_auth
    if auth.open and not is_loopback(settings.gateway_host):
        raise RuntimeError(
            f"GATEWAY_AUTH__OPEN is refused on a non-loopback bind ({settings.gateway_host}): "
            "every caller on the network could read and write the ledger"
        )
    return Guard(
        open=auth.open,
        throttle=FailedAuthThrottle(auth.failed_attempts, auth.failed_window_s),
        proxies=TrustedProxies.of(auth.trusted_proxies),
    )


def bootstrap(settings: Settings) -> Deps:
    """The gateway's dependencies from `settings`, which may be the shared root (the console and
    edge groups then take their defaults); installs the installation's secret (audit digests and
    idempotency-derived task ids are keyed by it)."""
    console, edge = (
        (settings.gateway_console, settings.gateway_edge)
        if isinstance(settings, GatewaySettings)
        else (ConsoleSettings(), EdgeSettings())
    )
    guard = guard_for(settings)
    installation.install(installation_secret(settings))
    allowed = AllowedHosts.of(settings.gateway_host, settings.gateway_allowed_hosts)
    return Deps(settings, guard, allowed, console, edge)
