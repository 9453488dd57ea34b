"""The smaller findings at the edge, each against the real gateway process (`edge_gateway`) on
real NATS + Postgres: a denial's audit row holds the route template, not the raw path; the
console links an outside URL only for http/https; a topic that grows past its limit when
de-identified is a 422 with the reason, and no request text reaches the log; `/search?q=` is
de-identified before it goes on the bus; an allowed host's Origin must match scheme and port;
a 422's `loc` never names a key the request made up."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import AsyncIterator

import httpx
import nats
import pytest
from nats.aio.msg import Msg
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_engine.stack import Stack
from research_ledger import AuditAction
from research_ledger.tables import AuditEvent

pytestmark = pytest.mark.e2e
API = "/api/research/v1"
NAME = "Johanna Pemberton-Quayle"


async def test_a_denied_requests_audit_row_holds_the_route_template_not_the_path(
    edge_gateway: Stack,
    api_keys: dict[str, dict[str, str]],
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    workspace = "jane-roe-mrn-00123456"  # a path a caller typed: it can carry a name
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        denied = await client.put(
            f"{API}/source-lists/limits/{workspace}",
            json={"max_references": 5},
            headers=api_keys["researcher"],
        )
    assert denied.status_code == 403
    async with sessions() as session:
        rows = (
            await session.scalars(
                select(AuditEvent)
                .where(AuditEvent.action == AuditAction.ADMIN_DENIED)
                .order_by(AuditEvent.id.desc())
                .limit(5)
            )
        ).all()
    assert rows and rows[0].payload["path"] == f"{API}/source-lists/limits/{{workspace}}"
    assert not [r for r in rows if "jane-roe" in json.dumps(r.payload)]


def test_the_console_links_outside_urls_only_for_http_and_https(edge_gateway: Stack) -> None:
    """A source card's `href` came from third-party metadata as it was: `javascript:` ran."""
    with httpx.Client(base_url=edge_gateway.gateway_url, timeout=30) as client:
        shared = client.get("/static/console/console.js").text
        pages = client.get("/static/console/pages.js").text
    assert "href: s.url" not in pages and "outsideUrl(s.url)" in pages
    function = re.search(r"function outsideUrl\(value\) \{.*?\n\}", shared, re.DOTALL)
    assert function is not None, "console.js has no outsideUrl"
    cases = [
        "https://doi.org/10.1000/x",
        "http://example.org/paper?id=1",
        "javascript:alert(document.cookie)",
        " JavaScript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/x",
        "/relative",
        None,
    ]
    script = (
        f"{function.group(0)}\nconsole.log(JSON.stringify({json.dumps(cases)}.map(outsideUrl)));"
    )
    linked = json.loads(
        subprocess.run(
            ["node", "-e", script], capture_output=True, text=True, check=True, timeout=30
        ).stdout
    )
    assert linked == ["https://doi.org/10.1000/x", "http://example.org/paper?id=1"] + [None] * 8


def _short_names_topic() -> str:
    """490-odd characters of short names: each becomes a longer `[NAME_n]` when de-identified."""
    names = [f"Mr {a}{b}" for a in "ABCDEFGHJKLMNPRSTW" for b in "aeiou"]
    return ("Did aspirin help " + " and ".join(names))[:490].rsplit(" and ", 1)[0]


async def test_a_topic_that_grows_past_its_limit_when_deidentified_is_a_422_and_never_logged(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]]
) -> None:
    topic = _short_names_topic()
    assert len(topic) <= 500
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        reply = await client.post(
            f"{API}/reviews", json={"topic": topic}, headers=api_keys["researcher"]
        )
    assert reply.status_code == 422, reply.text
    [error] = reply.json()["detail"]
    assert error["loc"] == ["body", "topic"] and "once personal identifiers" in error["msg"]
    assert "Mr Aa" not in reply.text
    log = (edge_gateway.logs_dir / "gateway.log").read_text(errors="replace")
    assert "Mr Aa" not in log and "Did aspirin help" not in log


@pytest.fixture
async def connector_stub(nc: nats.NATS) -> AsyncIterator[list[str]]:
    """Answers the gateway's corpus searches with no hits and keeps each query it was sent."""
    queries: list[str] = []

    async def answer(msg: Msg) -> None:
        queries.append(SearchEvidence.model_validate_json(msg.data).query)
        await msg.respond(EvidenceFound().model_dump_json().encode())

    subscription = await nc.subscribe(subjects.CONNECTOR_SEARCH, cb=answer)
    yield queries
    await subscription.unsubscribe()


async def test_a_search_query_is_deidentified_before_it_goes_on_the_bus(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]], connector_stub: list[str]
) -> None:
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        found = await client.get(
            f"{API}/search",
            params={"q": f"Did {NAME} (MRN 48213377) respond to metformin"},
            headers=api_keys["reader"],
        )
    assert found.status_code == 200, found.text
    assert connector_stub and "metformin" in connector_stub[-1]
    assert "Pemberton" not in connector_stub[-1] and "48213377" not in connector_stub[-1]
    assert "Pemberton" not in found.text


async def test_an_allowed_hosts_origin_must_match_scheme_and_port(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]]
) -> None:
    """`research.example.org` (no port) is in GATEWAY_ALLOWED_HOSTS: its Origin on any port and
    either scheme was accepted."""
    port = edge_gateway.gateway_port
    public = {**api_keys["reader"], "Host": "research.example.org"}
    own = {**api_keys["reader"], "Host": f"127.0.0.1:{port}"}
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        for headers, origin in (
            (public, "http://research.example.org:9999"),
            (public, "https://research.example.org"),  # the request came over http
            (public, "http://research.example.org:443"),
            (own, f"https://127.0.0.1:{port}"),
            (own, "http://127.0.0.1"),
        ):
            refused = await client.get(f"{API}/findings", headers={**headers, "Origin": origin})
            assert refused.status_code == 403, origin
        for headers, origin in (
            (public, "http://research.example.org"),
            (public, "http://research.example.org:80"),
            (own, f"http://127.0.0.1:{port}"),
        ):
            served = await client.get(f"{API}/findings", headers={**headers, "Origin": origin})
            assert served.status_code == 200, (origin, served.text)


async def test_a_422_never_names_a_key_the_request_made_up(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]]
) -> None:
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        for body in (
            {"topic": "vitamin D and fractures", NAME: 1},
            {"topic": "vitamin D and fractures", "filters": {NAME: 2020}},
        ):
            reply = await client.post(f"{API}/reviews", json=body, headers=api_keys["researcher"])
            assert reply.status_code == 422, reply.text
            assert "Pemberton" not in reply.text, reply.text
            assert all(error["type"] == "extra_forbidden" for error in reply.json()["detail"])
