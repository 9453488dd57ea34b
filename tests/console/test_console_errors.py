"""The Ask form and the console's errors in a real browser: only the chosen mode's fields show, the
limits are the API's own (its OpenAPI schema) with a length counter, and every error path reads as
plain words naming the field and the limit: no "[object Object]", no raw JSON, no "422:" prefix."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.async_api import expect

from research_engine.stack import Stack
from tests.console.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.e2e]


async def plain(page: Any) -> str:
    """The alert's text, after checking it (and the whole page) reads as words."""
    alert = page.get_by_role("alert")
    await expect(alert).to_be_visible()
    text = await alert.inner_text()
    for raw in ("[object Object]", "{", "422", "404:", "409:", "String should have"):
        assert raw not in text, f"{raw!r} in the alert: {text}"
    assert "[object Object]" not in await page.locator("body").inner_text()
    return text


async def test_the_ask_form_shows_one_modes_fields_and_the_apis_limits(
    open_console: Any, console_stack: Stack
) -> None:
    page = await open_console(console_stack.admin_key)
    await expect(page.get_by_label("Workspace")).to_be_hidden()  # the question mode's fields only
    await expect(page.get_by_label("Number of references")).to_be_hidden()
    await page.get_by_role("radio", name="Source list").check()
    await expect(page.get_by_label("Workspace")).to_be_visible()
    await page.get_by_role("radio", name="Literature review").check()
    await expect(page.get_by_label("Workspace")).to_be_hidden()
    rounds = page.get_by_label("Peer-review rounds")
    await expect(rounds).to_have_attribute("max", "2")  # ReviewRequest.max_iterations ≤ 2
    await expect(page.locator("label[for=max_iterations]")).to_contain_text("1–2")
    topic = page.get_by_label("Review topic")
    await topic.fill("heart failure " * 44)  # 616 characters, trimmed to 615
    await expect(page.locator("#prompt-count")).to_contain_text("615 / 500 characters")
    await expect(page.locator("#prompt-count")).to_contain_text("115 too many")
    await page.get_by_role("button", name="Submit").click()
    text = await plain(page)
    assert text == "Review topic: at most 500 characters (this one has 615)."
    await shot(page, "ask-error-too-long")
    await topic.fill("ab")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.get_by_role("alert")).to_contain_text("Review topic: at least 3 characters")
    await plain(page)


async def test_every_error_path_reads_as_words(open_console: Any, console_stack: Stack) -> None:
    page = await open_console(console_stack.admin_key)
    await page.goto(f"{console_stack.gateway_url}/report/{uuid.uuid4()}")
    await expect(page.locator("#result")).to_have_text("Report not available.")
    assert (await plain(page)).startswith("No report ")
    await page.goto(f"{console_stack.gateway_url}/operate")
    correlator = page.locator('[data-agent="correlator"]')
    await correlator.get_by_role("button", name="pause").click()
    await expect(page.get_by_role("alert")).to_contain_text("correlator: pause")
    try:
        await correlator.get_by_role("button", name="run-once").click()
        await expect(page.get_by_role("alert")).to_contain_text("paused")
        await plain(page)  # was "409: [object Object]"
        await expect(correlator.locator(".agent-state")).not_to_contain_text("[object Object]")
        await shot(page, "operate-paused-run-once")
    finally:
        await correlator.get_by_role("button", name="resume").click()
        await expect(page.get_by_role("alert")).to_contain_text("correlator: resume")
