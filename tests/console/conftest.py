"""The web console in a real headless Chromium (Playwright) against the stack run as processes
(real NATS + Postgres, the demo corpus): the gateway serves the console and the services answer.

Skips with instructions when Playwright or Chromium is missing (`sh scripts/setup.sh` installs
both when it may: root + apt). Screenshots go to `test-artefacts/console/` (gitignored).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.harness.servers import Servers
from bench.harness.stack import ingest_demo_corpus
from research_engine.stack import Stack
from research_platform.embedded import free_port

CHROMIUM = os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts" / "console"
HOW_TO_RUN = (
    "install Chromium (`sudo apt-get install -y chromium`, or set CONSOLE_CHROMIUM to a Chromium binary) "
    "and the test extra (`sh scripts/setup.sh`), then `.venv/bin/python -m pytest tests/console -m browser`"
)
# The services the console's pages need: each mode's worker, the connector they ask, one periodic agent.
SERVICES = (
    "connector",
    "researcher",
    "critic",
    "reviewer",
    "scout",
    "verifier",
    "correlator",
    "gateway",
)
GRAFANA_URL = "https://grafana.console-test.example"  # the gateway's GATEWAY_CONSOLE__GRAFANA_URL in these tests


def _playwright() -> Any:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip(f"Playwright is not installed: {HOW_TO_RUN}")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM}: {HOW_TO_RUN}")
    return async_playwright


@pytest.fixture(
    scope="package"
)  # on the shared bus: gone before the e2e stacks run (tests/conftest.py)
def console_stack(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The services as processes, the gateway (and the console) on a free port."""
    _playwright()
    running = Stack(
        tmp_path_factory.mktemp("console"),
        gateway_port=free_port(),
        services=SERVICES,
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        extra_env={"ACK_WAIT_S": "10", "GATEWAY_CONSOLE__GRAFANA_URL": GRAFANA_URL},
    )
    running.start_servers()
    errors: list[BaseException] = []

    def ingest() -> None:
        try:
            asyncio.run(ingest_demo_corpus(servers.database_url))
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    worker = threading.Thread(target=ingest)
    worker.start()
    running.start_services()
    worker.join()
    try:
        if errors:
            raise errors[0]
        running.wait_ready(timeout=180)
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="package")  # no wider than console_stack, which it uses
async def chromium(console_stack: Stack) -> AsyncIterator[Any]:
    async_playwright = _playwright()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        await browser.close()


@pytest.fixture
async def open_console(chromium: Any, console_stack: Stack) -> AsyncIterator[Any]:
    """`await open_console(key, width=1280)` → a page signed in with `key` through the sign-in form
    (a POST: a key never travels in a URL); `open_console(url=...)` opens a code URL instead."""
    contexts: list[Any] = []

    async def signed_in(key: str = "", width: int = 1280, url: str = "") -> Any:
        context = await chromium.new_context(
            viewport={"width": width, "height": 900}, accept_downloads=True
        )
        contexts.append(context)
        page = await context.new_page()
        page.set_default_timeout(20_000)
        if url:
            await page.goto(url)
            return page
        await page.goto(f"{console_stack.gateway_url}/")
        await page.get_by_label("API key").fill(key)
        async with page.expect_navigation():
            await page.get_by_role("button", name="Sign in").click()
        return page

    yield signed_in
    for context in contexts:
        await context.close()


async def shot(page: Any, name: str) -> None:
    """A full-page screenshot under test-artefacts/console/ (what each page looked like)."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTEFACTS / f"{name}.png"), full_page=True)
