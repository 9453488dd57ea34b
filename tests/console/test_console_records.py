"""The console's record pages in a real browser: a source list's preferred flag as the API stores
it, re-run and the diff of each run, edit configuration; the schedules list with pause; reviews
(stale ones and a refresh's diff); watched claims with their verdict history; Grafana links at the
configured base URL."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from research_engine.stack import Stack
from tests.console.conftest import GRAFANA_URL, shot
from tests.console.seed import (
    LLM_REASON,
    NEAR_MISS,
    WATCHED_VERDICTS,
    many_reviews,
    stale_review_with_a_refresh,
    verification_with_closest_evidence,
    watched_claim_with_history,
)
from tests.keys import api_key
from tests.reports.sample import review

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
LONG = 240_000  # ms a real run may take on a shared 2-core machine (a bound, not a measured speed)
PROMPT = "exercise training and quality of life in chronic heart failure"


async def test_a_source_list_rerun_shows_each_runs_diff_and_its_configuration_can_be_edited(
    open_console: Any, console_stack: Stack, sessions: Any
) -> None:
    api = f"{console_stack.gateway_url}/api/research/v1"
    headers = console_stack.api_headers
    httpx.put(  # noqa: ASYNC210 - the stack serves from its own processes: a blocking call stalls only this test
        f"{api}/source-lists/limits/records",
        json={"allowed_apis": ["corpus"], "max_references": 4},
        headers=headers,
    ).raise_for_status()
    accepted = httpx.post(  # noqa: ASYNC210 - the stack serves from its own processes: a blocking call stalls only this test
        f"{api}/source-lists",
        headers=headers,
        json={
            "prompt": PROMPT,
            "workspace": "records",
            "num_references": 4,
            "update_frequency": "P7D",
        },
    ).json()
    list_id = accepted["source_list_id"]
    page = await open_console(console_stack.admin_key)
    await page.goto(
        f"{console_stack.gateway_url}/run/{accepted['run_id']}?kind=source_list&id={list_id}"
    )
    await expect(page.locator("#run-status")).to_have_text("completed", timeout=LONG)

    await page.goto(f"{console_stack.gateway_url}/sources/{list_id}")
    cards = page.locator("#sl-cards li.source")
    await expect(cards.first).to_be_visible()
    flag = cards.first.get_by_role("button", name="Flag preferred")
    await flag.focus()
    await page.keyboard.press("Enter")  # keyboard works; focus stays on the card's control
    await expect(page.get_by_role("alert")).to_have_text("Source flagged preferred.")
    unflag = cards.first.get_by_role("button", name="Unflag preferred")
    await expect(unflag).to_be_focused()
    shown = httpx.get(f"{api}/source-lists/{list_id}", headers=headers).json()  # noqa: ASYNC210 - the stack serves from its own processes
    assert [s["preferred"] for s in shown["sources"]].count(
        True
    ) == 1  # the flag is the API's, not the page's
    await page.reload()
    await expect(cards.locator(".preferred")).to_have_count(1)
    await page.get_by_text("Stored configuration").click()
    await expect(page.locator("#sl-config")).to_contain_text(PROMPT)

    await page.get_by_role("button", name="Re-run with this configuration").click()
    await page.wait_for_url(re.compile(r"/run/"))
    await expect(page.locator("#run-status")).to_have_text("completed", timeout=LONG)
    await page.goto(f"{console_stack.gateway_url}/sources/{list_id}")
    runs = page.locator("#sl-runs li.run")
    await expect(runs).to_have_count(3)  # scheduled next, the re-run, the first run
    await expect(runs.nth(1)).to_contain_text("rerun")
    await expect(runs.nth(2).locator("details.diff summary")).to_contain_text(
        re.compile(r"First snapshot: [1-4] added")
    )
    await runs.nth(1).locator("details.diff summary").click()
    await expect(runs.nth(1).locator("details.diff")).to_contain_text(
        re.compile(r"No changes\.|Added|Changed|Dropped")
    )
    await expect(runs.nth(1).locator("details.diff summary")).to_contain_text(
        re.compile(r"Changes: \d+ added, \d+ changed, \d+ dropped")
    )
    await shot(page, "source-list-reruns")

    await page.get_by_role("link", name="Edit configuration").click()
    await page.wait_for_url(re.compile(r"/\?from="))
    await expect(page.locator("#prefilled")).to_be_visible()
    await expect(page.get_by_role("radio", name="Source list")).to_be_checked()
    await expect(page.get_by_label("What should the sources cover?")).to_have_value(PROMPT)
    await expect(page.get_by_label("Workspace")).to_have_value("records")
    await expect(page.get_by_label("Number of references")).to_have_value("4")
    await expect(page.get_by_label("Schedule (optional)")).to_have_value("P7D")
    await page.get_by_label("Number of references").fill("3")
    await shot(page, "source-list-edit-configuration")
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url(re.compile(r"/run/"))
    await expect(page.locator("#run-status")).to_have_text(
        "completed", timeout=LONG
    )  # the report is rendered …
    await expect(page.locator("#result pre").first).to_contain_text(
        '"num_references": 3'
    )  # … under the request


async def test_schedules_list_next_runs_and_pause_needs_admin(
    open_console: Any, console_stack: Stack, sessions: Any
) -> None:
    api = f"{console_stack.gateway_url}/api/research/v1"
    listed = httpx.post(  # noqa: ASYNC210 - the stack serves from its own processes: a blocking call stalls only this test
        f"{api}/source-lists",
        headers=console_stack.api_headers,
        json={
            "prompt": "statins and muscle symptoms schedule",
            "num_references": 2,
            "update_frequency": "P1D",
        },
    ).json()
    page = await open_console(console_stack.admin_key)
    await page.goto(
        f"{console_stack.gateway_url}/run/{listed['run_id']}?kind=source_list&id={listed['source_list_id']}"
    )
    await expect(page.locator("#run-status")).to_have_text(
        "completed", timeout=LONG
    )  # the scout sets the schedule
    await page.get_by_role("link", name="Schedules", exact=True).click()
    row = page.locator(f'tr[data-source-list-id="{listed["source_list_id"]}"]')
    await expect(row).to_contain_text("P1D")
    await expect(row.locator(".badge")).to_have_text("active")
    await row.get_by_role("button", name=re.compile("^pause", re.IGNORECASE)).click()
    await expect(page.get_by_role("alert")).to_have_text("Schedule paused.")
    await expect(row.locator(".badge")).to_have_text("paused")
    await expect(
        row.get_by_role("button", name=re.compile("^resume", re.IGNORECASE))
    ).to_be_enabled()
    await shot(page, "schedules")
    reader = await open_console(await api_key(sessions, "reader"))
    await reader.get_by_role("link", name="Schedules", exact=True).click()
    await expect(reader.locator("#sched-need-admin")).to_contain_text("need the admin role")
    await expect(
        reader.locator(f'tr[data-source-list-id="{listed["source_list_id"]}"] button').first
    ).to_be_disabled()


async def test_reviews_show_the_stale_ones_and_the_diff_of_a_refresh(
    open_console: Any, console_stack: Stack, sessions: Any, unique: str
) -> None:
    stale_id, fresh_id = await stale_review_with_a_refresh(sessions, f"vitamin D review {unique}")
    page = await open_console(await api_key(sessions, "reader"))
    await page.get_by_role("link", name="Reviews", exact=True).click()
    stale = page.locator(f'li[data-review-id="{stale_id}"]')
    await expect(stale.locator(".badge")).to_have_text("stale")
    await expect(stale).to_contain_text("Stale: claim superseded")
    await expect(page.locator(f'li[data-review-id="{fresh_id}"] .badge')).to_have_text("completed")
    await page.get_by_label("Status").select_option("stale")
    await page.get_by_role("button", name="Show reviews").click()
    await expect(page.locator(f'li[data-review-id="{fresh_id}"]')).to_have_count(0)
    await expect(stale).to_be_visible()
    await expect(
        stale.get_by_role("button", name="Refresh")
    ).to_be_disabled()  # a reader may not refresh
    await stale.get_by_text("Versions and changes").click()
    await expect(stale.locator("ol.versions > li")).to_have_count(2)
    second = stale.locator("ol.versions > li").nth(1)
    await expect(second).to_contain_text("Changes from version 1 to 2")
    dropped = second.locator(".change", has_text="References dropped (1)")
    await expect(dropped.locator("li")).to_have_text(
        f"{review().references[2].title} ({review().references[2].year})"
    )
    await shot(page, "reviews")


async def test_the_ledgers_reports_list_a_page_at_a_time(
    open_console: Any, console_stack: Stack, sessions: Any, unique: str
) -> None:
    seeded = await many_reviews(sessions, f"paged review {unique}", 51)  # more than one page
    page = await open_console(await api_key(sessions, "reader"))
    await page.get_by_role("link", name="Ledger").click()
    listed = page.locator("#reports li[data-report-id]")
    await expect(listed).to_have_count(50)
    more = page.get_by_role("button", name="Show more reports")
    while await more.is_visible():  # each page appends the reports not shown yet
        shown = await listed.count()
        await more.click()
        await expect(listed).not_to_have_count(shown)
    ids = await listed.evaluate_all("(items) => items.map((li) => li.dataset.reportId)")
    assert len(ids) == len(set(ids)) and {str(i) for i in seeded} <= set(ids)
    await expect(page.locator(f'#reports li[data-report-id="{seeded[0]}"] a')).to_have_text(
        f"paged review {unique} 0"
    )


async def test_watched_claims_show_their_verdict_history(
    open_console: Any, console_stack: Stack, sessions: Any, unique: str
) -> None:
    watched_id, unwatched_id = await watched_claim_with_history(sessions, unique)
    page = await open_console(await api_key(sessions, "reader"))
    await page.get_by_role("link", name="Watched claims").click()
    row = page.locator(f'tr[data-verification-id="{watched_id}"]')
    await expect(row.get_by_role("link")).to_have_text(f"Ketoplex lowers blood pressure {unique}")
    await expect(row.locator("ol.history li")).to_have_count(2)
    assert [
        t.split(" LOW")[0].strip() for t in await row.locator("ol.history li").all_inner_texts()
    ] == list(WATCHED_VERDICTS)
    await expect(row.locator("td").nth(1)).to_contain_text(
        WATCHED_VERDICTS[-1]
    )  # the latest verdict
    await expect(page.locator(f'tr[data-verification-id="{unwatched_id}"]')).to_have_count(0)
    await shot(page, "watched-claims")
    await page.set_viewport_size({"width": 390, "height": 844})
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    await shot(page, "watched-claims-phone")


async def test_operate_links_the_dashboards_at_the_configured_grafana(
    open_console: Any, console_stack: Stack
) -> None:
    page = await open_console(console_stack.admin_key)
    await page.get_by_role("link", name="Operate").click()
    link = page.get_by_role("link", name="Grafana: pipeline")
    await expect(link).to_have_attribute("href", f"{GRAFANA_URL}/d/research-pipeline")
    await expect(page.locator('a[href^="http://localhost:3000"]')).to_have_count(0)


async def test_a_verification_shows_its_closest_evidence_judge_and_llm_check_in_words(
    open_console: Any, console_stack: Stack, sessions: Any, unique: str
) -> None:
    claim = f"Ketoplex lowers blood pressure {unique}"
    report_id = await verification_with_closest_evidence(sessions, claim)
    page = await open_console(await api_key(sessions, "reader"))
    await page.goto(f"{console_stack.gateway_url}/report/{report_id}")
    await expect(page.get_by_role("heading", level=1)).to_have_text(claim)
    result = page.locator("#result")
    await expect(result.locator(".judge")).to_contain_text("Judged by abstract-test/rules-1.")
    await expect(result.locator(".llm-check")).to_have_text(
        "A language model checked the verdict and disagrees (it answered “CONTRADICTED”): "
        + LLM_REASON
    )
    await expect(result.locator("p.not-counted")).to_have_text(
        f"Leans support with probability 0.41, under the bar of 0.60: {NEAR_MISS}"
    )
    await expect(result.locator(".tag-not-counted")).to_have_text("NOT COUNTED")
    await expect(result.locator("article .verbatim")).to_have_count(1)  # the quote, not repeated
    await expect(result.locator("article details.quote")).to_have_count(0)
    await expect(result.locator("article li .study")).to_have_text(
        "Study: [1] 12 volunteers."
    )  # the cited paper's size, as its text states it
    await expect(result.locator("article p.ref .study")).to_have_text("· 12 volunteers")
    check = result.locator("details.citation-check")
    await expect(check).to_contain_text("1 of 2 quotes found verbatim in the cited source.")
    await expect(check.locator("tbody tr")).to_contain_text(
        "The quote is not found word for word in the source"
    )
    await expect(result.locator("details.assessment summary")).to_have_text(
        "Assessment: INSUFFICIENT EVIDENCE · confidence LOW"
    )
    for panel in await result.locator("details.panel").all_inner_texts():
        assert '{"' not in panel and "[object Object]" not in panel, panel
    await shot(page, "verification-closest-evidence")
