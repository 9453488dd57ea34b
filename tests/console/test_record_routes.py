"""The read routes the console's record pages use, in-process on real Postgres + NATS: the reviews
list (a stale one shows its reason; `status=stale` narrows it) with each refresh's diff in the
versions; the watched claims with their verdict history in order; the roles; the Grafana base
URL setting reaching the Operate page's dashboard links (none without one); and the favicon."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from bench.harness.servers import Servers
from research_gateway.main import create_app
from research_gateway.settings import ConsoleSettings, GatewaySettings
from tests.console.seed import stale_review_with_a_refresh, watched_claim_with_history
from tests.keys import api_key
from tests.reports.sample import review
from tests.teardown import left_within

pytestmark = pytest.mark.integration
API = "/api/research/v1"
GRAFANA = "https://grafana.example.org/sub"


@pytest.fixture(scope="module")
async def gateway(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    settings = GatewaySettings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        gateway_console=ConsoleSettings(grafana_url=GRAFANA + "/"),
    )
    app = create_app(settings)
    async with (
        left_within(app.router.lifespan_context(app), "gateway lifespan"),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=30
        ) as client,
    ):
        yield client


async def test_the_reviews_list_shows_stale_ones_and_each_refresh_diff(
    gateway: httpx.AsyncClient, sessions: Any, unique: str
) -> None:
    stale_id, fresh_id = await stale_review_with_a_refresh(sessions, f"topic {unique}")
    reader = {"X-API-Key": await api_key(sessions, "reader")}
    assert (await gateway.get(f"{API}/reviews")).status_code == 401
    listed = {
        r["review_id"]: r
        for r in (await gateway.get(f"{API}/reviews", params={"limit": 500}, headers=reader)).json()
    }
    assert (
        listed[str(stale_id)]["status"] == "stale"
        and listed[str(stale_id)]["stale_reason"] == "claim superseded"
    )
    assert listed[str(stale_id)]["version"] == 2 and listed[str(fresh_id)]["status"] == "completed"
    stale_only = (
        await gateway.get(
            f"{API}/reviews", params={"status": "stale", "limit": 500}, headers=reader
        )
    ).json()
    assert str(stale_id) in {r["review_id"] for r in stale_only} and str(fresh_id) not in {
        r["review_id"] for r in stale_only
    }
    assert {r["status"] for r in stale_only} == {"stale"}
    assert (
        await gateway.get(f"{API}/reviews", params={"status": "lost"}, headers=reader)
    ).status_code == 422
    versions = (await gateway.get(f"{API}/reviews/{stale_id}/versions", headers=reader)).json()
    assert [v["version"] for v in versions] == [1, 2] and versions[0]["diff"] is None
    assert [r["title"] for r in versions[1]["diff"]["references_dropped"]] == [
        review().references[2].title
    ]


async def test_watched_claims_list_their_verdict_history_oldest_first(
    gateway: httpx.AsyncClient, sessions: Any, unique: str
) -> None:
    watched_id, unwatched_id = await watched_claim_with_history(sessions, unique)
    reader = {"X-API-Key": await api_key(sessions, "reader")}
    assert (await gateway.get(f"{API}/watched-claims")).status_code == 401
    rows = (
        await gateway.get(f"{API}/watched-claims", params={"limit": 500}, headers=reader)
    ).json()
    ours = {r["verification_id"]: r for r in rows}
    assert str(unwatched_id) not in ours
    watched = ours[str(watched_id)]
    assert (
        watched["claim"].endswith(unique) and watched["interval_days"] == 7 and watched["runs"] == 2
    )
    assert [h["verdict"] for h in watched["history"]] == [
        "INSUFFICIENT EVIDENCE",
        "PARTIALLY SUPPORTED",
    ]
    assert [h["run_id"] for h in watched["history"]] == [f"vf-1-{unique}", f"vf-2-{unique}"]
    assert [r["next_due_at"] for r in rows] == sorted(
        r["next_due_at"] for r in rows
    )  # the next due first


async def test_the_operate_page_links_grafana_at_the_configured_url(
    gateway: httpx.AsyncClient, sessions: Any
) -> None:
    key = await api_key(sessions, "admin")
    signed = await gateway.post(
        "/sign-in",
        content=f"key={key}",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    gateway.cookies.set("research_console_session", signed.cookies["research_console_session"])
    try:
        page = (await gateway.get("/operate")).text
    finally:
        gateway.cookies.clear()
    assert f'href="{GRAFANA}/d/research-pipeline"' in page and "localhost:3000" not in page


async def test_without_a_grafana_url_the_operate_page_links_no_dashboards(
    servers: Servers, sessions: Any
) -> None:
    assert ConsoleSettings().grafana_url == ""  # the default: no server is assumed to run
    app = create_app(GatewaySettings(nats_url=servers.nats_url, database_url=servers.database_url))
    key = await api_key(sessions, "admin")
    async with (
        left_within(app.router.lifespan_context(app), "gateway lifespan"),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=30
        ) as client,
    ):
        signed = await client.post(
            "/sign-in",
            content=f"key={key}",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        client.cookies.set("research_console_session", signed.cookies["research_console_session"])
        page = (await client.get("/operate")).text
    assert "Grafana" not in page and "/d/research-" not in page


async def test_the_console_has_a_favicon(gateway: httpx.AsyncClient) -> None:
    moved = await gateway.get("/favicon.ico")
    assert moved.status_code == 308 and moved.headers["location"] == "/static/console/favicon.svg"
    icon = await gateway.get("/static/console/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert 'rel="icon"' in (await gateway.get("/")).text  # the sign-in page (every page) names it


def test_the_grafana_url_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_CONSOLE__GRAFANA_URL", "http://grafana.internal:3000/")
    assert GatewaySettings().gateway_console.grafana_url == "http://grafana.internal:3000"
    monkeypatch.setenv("GATEWAY_CONSOLE__GRAFANA_URL", "javascript:alert(1)")
    with pytest.raises(ValueError, match="grafana_url"):
        GatewaySettings()
