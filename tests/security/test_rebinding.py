"""DNS rebinding and cross-site requests, through the real gateway process in open mode (the worst
case: a keyless request is an anonymous admin): a foreign `Host` is 421 on every route and on
`/mcp`, a foreign `Origin` is 403, and the clients that send no `Origin` (the Python client, the
SDK's MCP client) keep working."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from bench.harness.servers import Servers
from research_client import ResearchClient
from research_engine.stack import Stack
from research_gateway.hosts import AllowedHosts
from research_platform.embedded import free_port
from tests.gateway.mcp.common import TOOL_NAMES, http_client

API = "/api/research/v1"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "page", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def open_gateway(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(
        tmp_path_factory.mktemp("rebinding"),
        gateway_port=free_port(),
        services=("gateway",),
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        extra_env={"GATEWAY_AUTH__OPEN": "true"},
    )
    running.start_servers()
    running.start_services()
    try:
        running.wait_ready(timeout=180)
        yield running
    finally:
        running.stop()


@pytest.mark.e2e
async def test_a_rebound_page_gets_nothing_and_the_clients_keep_working(
    open_gateway: Stack,
) -> None:
    own = open_gateway.gateway_url  # http://127.0.0.1:<port>
    host = own.removeprefix("http://")
    async with httpx.AsyncClient(base_url=own, timeout=30) as raw:
        # attacker.example rebound to 127.0.0.1: the browser sends the page's own name as Host
        rebound = {
            "Host": f"attacker.example:{open_gateway.gateway_port}",
            "Origin": "http://attacker.example",
        }
        session = await raw.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **rebound})
        assert session.status_code == 421 and "mcp-session-id" not in session.headers
        for method, path in (
            ("GET", f"{API}/findings"),
            ("GET", f"{API}/audit"),
            ("POST", f"{API}/librarian/pause"),
            ("GET", "/"),
            ("GET", "/healthz"),
        ):
            answer = await raw.request(method, path, headers={"Host": rebound["Host"]})
            assert answer.status_code == 421, (method, path, answer.text)
        # a cross-site request with the right Host (a page elsewhere posting to 127.0.0.1)
        for origin in (
            "http://attacker.example",
            "http://localhost:3000",
            "null",
            f"https://{host}.attacker.example",
        ):
            posted = await raw.post(f"{API}/librarian/pause", headers={"Origin": origin})
            assert posted.status_code == 403 and "Origin" in posted.json()["detail"], origin
            opened = await raw.post(
                "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Origin": origin}
            )
            assert opened.status_code == 403, origin
        # the console's own pages (same origin) and a plain request are served
        assert (await raw.get(f"{API}/findings", headers={"Origin": own})).status_code == 200
        assert (
            await raw.get(
                f"{API}/findings", headers={"Host": f"localhost:{open_gateway.gateway_port}"}
            )
        ).status_code == 200
    with ResearchClient(
        own, open_gateway.admin_key
    ) as client:  # the Python client (and the CLI on it): no Origin
        assert client.health() and isinstance(client.findings(), list)
    async with http_client(own, None) as assistant:  # the SDK's MCP client: no Origin
        assert {t.name for t in (await assistant.list_tools()).tools} == TOOL_NAMES


@pytest.mark.unit
def test_the_allowed_hosts_are_loopback_the_bind_name_and_the_configured_public_names() -> None:
    proxied = AllowedHosts.of("0.0.0.0", ["Research.Example.org"])  # noqa: S104 - the bind under test
    assert [
        proxied.host_allowed(h)
        for h in (
            "127.0.0.1:8080",
            "localhost",
            "[::1]:8080",
            "research.example.org",
            "research.example.org:443",
        )
    ] == [True] * 5
    assert [
        proxied.host_allowed(h)
        for h in (
            "attacker.example",
            "localhost.attacker.example",
            "0.0.0.0:8080",
            "127.0.0.1.nip.io",
            "",
            "gateway",
        )
    ] == [False] * 6
    assert proxied.origin_allowed(
        "https://research.example.org", "127.0.0.1:8080", "https"
    )  # a proxy that rewrites Host (and says https in X-Forwarded-Proto)
    assert not proxied.origin_allowed(
        "http://127.0.0.1:8081", "127.0.0.1:8080"
    )  # another port is another origin
    # An allowed name without a port is its scheme's default port, on the request's scheme only.
    for foreign in (
        "http://research.example.org:8081",  # another port
        "https://research.example.org:8443",
        "http://research.example.org",  # another scheme than the request's
    ):
        assert not proxied.origin_allowed(foreign, "research.example.org", "https"), foreign
    assert not proxied.origin_allowed("https://127.0.0.1:8080", "127.0.0.1:8080", "http")
    assert proxied.origin_allowed(
        "https://research.example.org:443", "research.example.org", "https"
    )
    assert proxied.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", "http")
    assert AllowedHosts.of("10.0.0.5", []).host_allowed(
        "10.0.0.5:8080"
    )  # GATEWAY_HOST names the address
    assert AllowedHosts.of("::", []).public == () and AllowedHosts.of("localhost", []).public == ()
    mcp = proxied.transport_security()
    assert mcp.enable_dns_rebinding_protection and "research.example.org:*" in mcp.allowed_hosts
    assert (
        "https://research.example.org" in mcp.allowed_origins
        and "http://attacker.example" not in mcp.allowed_origins
    )
