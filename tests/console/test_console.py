"""The console in a real browser: sign-in, each mode's trace and result, the ledger, source-list
controls, the operator's controls with and without the admin key, and a run page reloaded (its
stored trace and result at once, whether or not the run stream answers)."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

import httpx
import nats
import pytest
from playwright.async_api import expect

from research_contracts.runs import AgentStarted, ReasoningShared, RunDone, VerdictReached
from research_engine.stack import Stack
from research_runs import RunRecorder
from tests.console.conftest import shot
from tests.keys import api_key

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
LONG = 240_000  # ms a real run may take on a shared 2-core machine (a bound, not a measured speed)
CLAIM = "Exercise training improves quality of life in chronic heart failure"
# The findings whose folded "Exact quote" says, word for word, what the finding says.
REPEATED_QUOTES = """() => [...document.querySelectorAll("#result article.markdown li")].filter((li) => {
  const quote = li.querySelector(":scope > details.quote blockquote");
  if (!quote) return false;
  const words = (t) => t.replace(/\\[\\d+\\]/g, " ").toLowerCase().replace(/[^a-z0-9]+/g, " ").trim();
  const own = [...li.childNodes].filter((n) => !(n.nodeType === 1 && n.matches("details, ul"))).map((n) => n.textContent).join(" ");
  return words(quote.textContent) === words(own.replace(/^\\s*[A-Z ]+\\s/, ""));
}).length"""


async def test_the_console_url_signs_in_once_with_a_session_cookie_and_drops_the_code(
    open_console: Any, console_stack: Stack
) -> None:
    # what `research-engine up` prints: a single-use code (issued with a blocking call of its own)
    url = await asyncio.to_thread(console_stack.console_url)
    page = await open_console(url=url)
    assert page.url == f"{console_stack.gateway_url}/", "the code left the address bar"
    cookie = next(
        c for c in await page.context.cookies() if c["name"] == "research_console_session"
    )
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert console_stack.admin_key not in cookie["value"]  # a session id, never the key
    spent = await open_console(url=url)  # the same URL in another browser: already spent
    await expect(spent.get_by_role("alert")).to_contain_text("spent")
    await expect(page.get_by_role("heading", name="Ask")).to_be_visible()
    await expect(page.locator("#role")).to_have_text("admin")
    await shot(page, "ask")
    await page.set_viewport_size(
        {"width": 390, "height": 844}
    )  # phone width: one column, nothing cut off
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    await shot(page, "ask-phone")
    await page.keyboard.press("Tab")  # the first stop is the skip link, and it shows
    await expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    bad = await open_console("rek_not-a-key")
    await expect(bad.get_by_role("alert")).to_contain_text("unknown or revoked key")
    await expect(bad.get_by_label("API key")).to_be_visible()
    await shot(bad, "sign-in-refused")


async def test_a_question_becomes_a_claim_whose_page_shows_quotes_and_verdict(
    open_console: Any, console_stack: Stack
) -> None:
    page = await open_console(console_stack.admin_key)
    await page.get_by_role("radio", name="Question → ledger claim").check()
    await page.get_by_label("Question", exact=True).fill(
        "Does exercise training improve quality of life in chronic heart failure?"
    )
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url(re.compile(r"/task/"))
    await expect(page.locator("#task article.claim")).to_be_visible(timeout=LONG)
    await expect(page.locator("#task article.claim .badge").first).not_to_have_text(
        "pending", timeout=LONG
    )  # the critic decided
    await shot(page, "question-task")
    await page.get_by_role("link", name="claim page").click()
    await expect(page.get_by_role("heading", name="Supports")).to_be_visible()
    await expect(page.locator("ol.supports blockquote").first).not_to_be_empty()
    await expect(page.get_by_role("heading", name="Verdict", exact=True)).to_be_visible(
        timeout=LONG
    )
    await expect(page.get_by_role("heading", name="Verdict history")).to_be_visible()
    await expect(page.locator("ol.history li").first).to_be_visible()
    await expect(page.locator("ol.history")).not_to_contain_text("No verdict events recorded")
    await expect(page.locator('a[href="/claim/"]')).to_have_count(0)  # no "Supersedes" to nothing
    await shot(page, "claim")
    await page.get_by_role("link", name="Ledger").click()
    await expect(page.locator("#claims tr").first).to_be_visible()
    await shot(page, "ledger")


async def test_a_literature_review_streams_its_trace_and_renders_the_report(
    open_console: Any, console_stack: Stack
) -> None:
    page = await open_console(console_stack.admin_key)
    await page.get_by_role("radio", name="Literature review").check()
    await page.get_by_label("Review topic").fill("exercise training in chronic heart failure")
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url(re.compile(r"/run/"))
    await expect(page.locator('#trace li[data-type="agent_start"]').first).to_be_visible(
        timeout=LONG
    )
    await expect(page.locator("#run-status")).to_have_text(
        re.compile("completed|failed"), timeout=LONG
    )
    await expect(page.locator('#trace li[data-type="verdict"]').first).to_be_visible()
    await expect(page.locator("#result article.markdown h2").first).to_be_visible()
    await expect(page.get_by_role("link", name="BibTeX")).to_be_visible()
    check = page.locator("#result details.citation-check")
    await expect(check.locator("summary")).to_contain_text("Citation check")
    await expect(check).to_contain_text(re.compile(r"\d+ of \d+ (quotes?|citations?|factual)"))
    await page.locator("#result details.peer-review summary").click()
    await expect(page.locator("#result details.peer-review")).to_contain_text("Issues")
    for panel in await page.locator("#result details.panel").all_inner_texts():
        assert "\\n" not in panel and '{"' not in panel, panel  # sentences and tables, no JSON
    assert await page.locator("#result details.panel pre").count() == 0
    assert not await page.evaluate(REPEATED_QUOTES), "an Exact quote repeats its finding"
    await shot(page, "review-run")


async def test_a_verification_streams_its_trace_and_renders_the_verdict_report(
    open_console: Any, console_stack: Stack
) -> None:
    page = await open_console(console_stack.admin_key)
    await page.get_by_role("radio", name="Verify a claim").check()
    await page.get_by_label("Claim to verify").fill(CLAIM)
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url(re.compile(r"/run/.*kind=verification"))
    await expect(page.locator("#run-status")).to_have_text(
        re.compile("completed|failed"), timeout=LONG
    )
    await expect(page.locator('#trace li[data-type="tool_call"]').first).to_be_visible()
    await expect(page.locator("#result article.markdown h2").first).to_be_visible()
    title = page.get_by_role("heading", level=1)
    await expect(title).to_have_text(CLAIM)  # the claim, not the run id
    assert CLAIM in await page.title()
    await expect(page.locator("#result .judge")).to_contain_text("Judged by")  # the judge's version
    await shot(page, "verify-run")
    # a reload with no live event at all (the run stream refused): the stored report is shown
    await page.route(re.compile(r"/runs/.*/events"), lambda route: route.abort())
    await page.reload()
    await expect(page.locator("#result article.markdown h2").first).to_be_visible()
    await expect(page.locator("#run-status")).to_have_text(re.compile("^(completed|failed)$"))
    await expect(page.get_by_role("heading", level=1)).to_have_text(CLAIM)
    assert await page.locator('#trace li[data-type="tool_call"]').count() == 0
    await page.unroute(re.compile(r"/runs/.*/events"))
    await page.reload()  # with the stream: its stored trace again, once, and the result
    await expect(page.locator('#trace li[data-type="done"]')).to_have_count(1)
    await expect(page.locator("#result article.markdown h2").first).to_be_visible()
    await expect(page.locator("#trace li.note")).to_have_count(0)  # no "Resumed after event"
    await page.get_by_role("link", name="Ledger").click()
    await expect(page.locator("#reports")).to_contain_text(CLAIM)  # the ledger lists topics
    await page.go_back()  # Back to the finished run: its result at once
    await expect(page.locator("#result article.markdown h2").first).to_be_visible()
    await expect(page.locator("#run-status")).to_have_text(re.compile("^(completed|failed)$"))


async def test_a_source_list_runs_then_remove_flag_export_and_pause(
    open_console: Any, console_stack: Stack
) -> None:
    headers = {"X-API-Key": console_stack.admin_key}
    limits = {"allowed_apis": ["corpus"], "max_references": 5}
    httpx.put(  # noqa: ASYNC210 - the stack serves from its own processes: a blocking call stalls only this test
        f"{console_stack.gateway_url}/api/research/v1/source-lists/limits/demo",
        json=limits,
        headers=headers,
    ).raise_for_status()
    page = await open_console(console_stack.admin_key)
    await page.get_by_role("radio", name="Source list").check()
    await page.get_by_label("Workspace").fill("demo")
    await page.get_by_label("Workspace").dispatch_event("change")
    await expect(page.locator("#limits")).to_contain_text("at most 5 references")
    await page.get_by_label("What should the sources cover?").fill(
        "exercise training quality of life in chronic heart failure"
    )
    await page.get_by_label("Number of references").fill("8")
    await page.get_by_label("Schedule (optional)").select_option("P1D")
    await shot(page, "ask-source-list")
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url(re.compile(r"/run/"))
    await expect(page.locator("#result pre").first).to_contain_text(
        '"num_references": 5'
    )  # the admin's clamp, shown
    await expect(page.locator("#run-status")).to_have_text("completed", timeout=LONG)
    await expect(page.locator("#trace li").first).to_be_visible()
    await expect(page.locator("#result article.markdown")).to_be_visible()
    await shot(page, "source-list-run")
    await page.get_by_role("link", name="Open as source-list cards").click()
    cards = page.locator("#sl-cards li.source")
    await expect(cards.first).to_be_visible()
    before = await cards.count()
    await cards.first.get_by_role("button", name="Flag preferred").click()
    await expect(page.get_by_role("alert")).to_have_text("Source flagged preferred.")
    await expect(cards.first.locator(".preferred")).to_be_visible()
    await cards.last.get_by_role("button", name="Remove").click()
    await expect(page.get_by_role("alert")).to_have_text("Source removed.")
    await expect(cards).to_have_count(before - 1)
    await page.reload()
    await expect(cards).to_have_count(before - 1)  # the removal is stored, not just hidden
    await page.get_by_label("Export").select_option("bib")
    async with page.expect_download() as download:
        await page.get_by_role("link", name="Download").click()
    saved = await (await download.value).path()
    assert "@" in saved.read_text()
    assert await page.locator('#sl-cards h2 a[href]:not([href^="http"])').count() == 0
    await expect(cards.first.get_by_role("link", name="Paper page")).to_have_attribute(
        "href", re.compile(r"^/paper/corpus%3A")
    )  # each card opens its paper's page
    await expect(page.get_by_role("button", name="Resume schedule")).to_be_disabled()  # active
    await page.get_by_role("button", name="Pause schedule").click()
    await expect(page.get_by_role("alert")).to_have_text("Schedule paused.")
    await expect(page.locator("#sl-schedule")).to_contain_text("paused")
    await expect(page.get_by_role("button", name="Pause schedule")).to_be_disabled()
    await expect(page.get_by_role("button", name="Resume schedule")).to_be_enabled()
    await shot(page, "source-list-cards")
    await page.set_viewport_size({"width": 390, "height": 844})
    await shot(page, "source-list-phone")


async def test_operator_run_once_needs_the_admin_key(
    open_console: Any, console_stack: Stack, sessions: Any
) -> None:
    admin = await open_console(console_stack.admin_key)
    await admin.get_by_role("link", name="Operate").click()
    correlator = admin.locator('[data-agent="correlator"]')
    await correlator.get_by_role("button", name="run-once").click()
    await expect(admin.get_by_role("alert")).to_contain_text("correlator: run-once")
    await expect(correlator.locator(".agent-state")).to_have_text(re.compile("running|idle"))
    await expect(correlator.locator(".agent-last")).not_to_have_text("—")  # a table row in words
    assert await admin.locator(".agents-table pre").count() == 0
    await expect(admin.locator("#dead-letters tr").first).to_be_visible()
    await shot(admin, "operate-admin")
    reader = await open_console(await api_key(sessions, "reader"))
    await reader.get_by_role("link", name="Operate").click()
    run_once = reader.locator('[data-agent="correlator"]').get_by_role("button", name="run-once")
    await expect(run_once).to_be_disabled()
    await expect(reader.locator("#need-admin")).to_contain_text("need the admin role")
    await run_once.evaluate("b => { b.disabled = false; }")  # the API is the gate, not the button
    await run_once.click()
    await expect(reader.get_by_role("alert")).to_contain_text("Forbidden (403)")
    await shot(reader, "operate-reader-403")


async def test_a_reload_replays_the_stored_trace_once_and_a_finished_run_ends_at_once(
    open_console: Any, console_stack: Stack, nc: nats.NATS
) -> None:
    run_id = f"console-{uuid.uuid4().hex[:10]}"
    recorder = RunRecorder(nc.jetstream(), run_id, agent="reviewer")
    await recorder.emit(AgentStarted(run_id=run_id, agent="reviewer"))
    await recorder.emit(ReasoningShared(run_id=run_id, agent="reviewer", text="plan 3 searches"))
    page = await open_console(console_stack.admin_key)
    await page.goto(f"{console_stack.gateway_url}/run/{run_id}")
    await expect(page.locator("#trace li.reasoning")).to_have_text(re.compile("plan 3 searches"))
    await page.reload()  # the stored events again, from the first
    await expect(page.locator("#trace li.reasoning")).to_have_text(re.compile("plan 3 searches"))
    await recorder.emit(ReasoningShared(run_id=run_id, agent="reviewer", text="search 1 of 3"))
    await recorder.emit(VerdictReached(run_id=run_id, agent="peer_reviewer", verdict="PASS"))
    await recorder.emit(RunDone(run_id=run_id))
    await expect(page.locator("#run-status")).to_have_text("completed")
    whole = ["reviewer plan 3 searches", "reviewer search 1 of 3"]
    reasoning = page.locator("#trace li.reasoning")
    assert [" ".join(t.split()) for t in await reasoning.all_inner_texts()] == whole
    await page.reload()  # a finished run: its whole trace at once, never "reconnecting…"
    await expect(page.locator("#run-status")).to_have_text("completed")
    assert [" ".join(t.split()) for t in await reasoning.all_inner_texts()] == whole
    await expect(page.locator('#trace li[data-type="verdict"]')).to_contain_text("PASS")
    await expect(page.locator("#trace li.note")).to_have_count(0)
    await shot(page, "run-reloaded")
