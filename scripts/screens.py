"""The console's pages as a researcher sees them, into `docs/screens/` (`task docs:screens`).

Starts the stack as processes on the demo corpus (embedded nats-server and PostgreSQL in a
throw-away folder, every service the pages need), signs in with the admin key in a headless
Chromium and walks the user guide's journey through the UI: the Ask form, a literature review, a
watched claim verification and a source list submitted through it, each finished run page, the
source list's page, My work, a paper page opened from a citation, the ledger, watched claims,
Operate and the audit log. Each page is taken at 1400 px wide (`<page>-wide.png`) and at a phone's
390 px (`<page>-phone.png`), as viewport screenshots (what a screen shows first, scrolled to the
result on a run page at phone width), reduced to 256 colours when Pillow is installed.

    .venv/bin/python scripts/screens.py [--out docs/screens] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.stack import demo_stack

SERVICES = (
    "connector",
    "researcher",
    "critic",
    "reviewer",
    "scout",
    "verifier",
    "correlator",
    "replicator",
    "librarian",
    "gateway",
)
TOPIC = "exercise training in chronic heart failure"
CLAIM = "Exercise training improves quality of life in chronic heart failure"
PROMPT = "exercise training and quality of life in chronic heart failure"
WORKSPACE = "guide"
SHOWN = "#result article.markdown"
LIMIT_MS = 300_000  # a bound on one run on a loaded 2-core machine, not a target
WIDTHS = {"wide": (1400, 900), "phone": (390, 844)}
ROOT = Path(__file__).resolve().parents[1]


async def _signed_in(browser: Any, gateway: str, key: str, width: str, out: Path) -> Any:
    """A page of a fresh context at `width`, signed in through the form (its sign-in page taken)."""
    w, h = WIDTHS[width]
    page = await (await browser.new_context(viewport={"width": w, "height": h})).new_page()
    page.set_default_timeout(30_000)
    await page.goto(f"{gateway}/")
    await page.get_by_label("API key").wait_for()
    await _shot(page, out, "sign-in", width)
    await page.get_by_label("API key").fill(key)
    async with page.expect_navigation():
        await page.get_by_role("button", name="Sign in").click()
    return page


async def _shot(page: Any, out: Path, name: str, width: str, at: str = "") -> None:
    """A viewport screenshot once the page's API calls have answered, scrolled to `at` if given."""
    from playwright.async_api import TimeoutError as NotIdle

    # its API calls answered; a run's event stream may stay open, so a busy page is taken as it is
    with contextlib.suppress(NotIdle):
        await page.wait_for_load_state("networkidle", timeout=5_000)
    if at:
        await page.locator(at).evaluate("(e) => e.scrollIntoView()")
    await page.screenshot(path=str(out / f"{name}-{width}.png"))


async def _ask(page: Any, gateway: str, mode: str, label: str, text: str) -> str:
    """Submit `text` in `mode` through the Ask form; the finished run page's URL."""
    await page.goto(f"{gateway}/")
    await page.get_by_role("radio", name=mode).check()
    await page.get_by_label(label).fill(text)
    if mode == "Verify a claim":
        await page.locator("#watch").check()
    if mode == "Source list":
        await page.get_by_label("Workspace").fill(WORKSPACE)
        await page.get_by_label("Number of references").fill("8")
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url("**/run/**")
    await page.locator(SHOWN).first.wait_for(timeout=LIMIT_MS)
    return str(page.url)


async def _journey(gateway: str, key: str, chromium: str, out: Path) -> list[str]:
    """Every page at every width; the names taken."""
    from playwright.async_api import async_playwright

    httpx.put(  # noqa: ASYNC210 - once, before the browser starts
        f"{gateway}/api/research/v1/source-lists/limits/{WORKSPACE}",
        json={"allowed_apis": ["corpus"], "max_references": 8},
        headers={"X-API-Key": key},
        timeout=30,
    ).raise_for_status()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"],
        )
        page = await _signed_in(browser, gateway, key, "wide", out)
        await page.get_by_role("radio", name="Literature review").check()
        await page.get_by_label("Review topic").fill(TOPIC)
        await _shot(page, out, "ask", "wide")
        runs = {
            "review": await _ask(page, gateway, "Literature review", "Review topic", TOPIC),
            "verification": await _ask(page, gateway, "Verify a claim", "Claim to verify", CLAIM),
            "source-list-run": await _ask(
                page, gateway, "Source list", "What should the sources cover?", PROMPT
            ),
        }
        list_id = re.search(r"[?&]id=([^&]+)", runs["source-list-run"])
        await page.goto(runs["verification"])
        paper = page.locator("#result a.paper-link").first
        await paper.wait_for()
        pages = {
            **runs,
            "source-list": f"{gateway}/sources/{list_id.group(1) if list_id else ''}",
            "my-work": f"{gateway}/my-work",
            "paper": f"{gateway}{await paper.get_attribute('href')}",
            "ledger": f"{gateway}/ledger",
            "watched": f"{gateway}/watched",
            "operate": f"{gateway}/operate",
            "audit": f"{gateway}/audit",
        }
        taken = ["sign-in", "ask", *pages]
        for width in WIDTHS:
            if width != "wide":
                page = await _signed_in(browser, gateway, key, width, out)
                await page.get_by_role("radio", name="Literature review").check()
                await page.get_by_label("Review topic").fill(TOPIC)
                await _shot(page, out, "ask", width)
            for name, url in pages.items():
                await page.goto(url)
                at = ""
                if name in runs:
                    await page.locator(SHOWN).first.wait_for(timeout=LIMIT_MS)
                    if width == "phone":  # one column: the trace first, the result below it
                        at = "#result-h"
                await _shot(page, out, name, width, at)
        await browser.close()
    return taken


def _reduce(path: Path) -> None:
    """The screenshot in 256 colours (a third of the bytes; text stays sharp)."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    reduced.save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screens")
    parser.add_argument(
        "--chromium", default=os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium")
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with demo_stack("docs-screens-", SERVICES) as stack:
        taken = asyncio.run(_journey(stack.gateway_url, stack.admin_key, args.chromium, args.out))
    for name in taken:
        for width in WIDTHS:
            path = args.out / f"{name}-{width}.png"
            _reduce(path)
            print(
                f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}  {path.stat().st_size:,} bytes"
            )


if __name__ == "__main__":
    main()
