"""The console's waits as a researcher sees them, in Chromium, on the demo corpus (`task bench:console`).

The stack runs as processes (every service the console needs, embedded nats-server and PostgreSQL
in a throw-away folder, the demo corpus ingested); a headless Chromium signs in with the admin key
and, for a literature review, a claim verification and a source list (corpus only, 10 sources):
- submit → shown: from the Submit click until the run page shows the stored result (its rendered
  report, `#result article.markdown`);
- reload → shown: from a reload of that finished run page until the result is shown again (the
  stored report, read at once; target ≤ 2 s).
Each is measured `--rounds` times (a different topic each round); prints a row per run, the median
per mode, and last the line:

    bench:console review_s=… verification_s=… source_list_s=… reload_s=… reload_max_s=… rounds=…

Never run on the full corpus: the demo corpus is what the figures are about.

    .venv/bin/python bench/console.py [--rounds N] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary
from bench.harness.stack import demo_stack

SERVICES = ("connector", "researcher", "critic", "reviewer", "scout", "verifier", "gateway")
TOPICS = (
    "exercise training in chronic heart failure",
    "vitamin D supplementation and fracture risk",
    "statins and cardiovascular events in older adults",
)
CLAIMS = (
    "Exercise training improves quality of life in chronic heart failure",
    "Vitamin D supplementation reduces fractures in older adults",
    "Statins lower the risk of cardiovascular events",
)
SHOWN = "#result article.markdown"
LIMIT_MS = 300_000  # a bound on one run on a loaded 2-core machine, not a target


async def _timed_run(page: Any, mode: str, text: str) -> tuple[float, float]:
    """(submit → shown, reload → shown) seconds for one run asked through the Ask form."""
    await page.goto(page.url.split("/run/")[0].split("/sources/")[0].rstrip("/") + "/")
    await page.get_by_role("radio", name=mode).check()
    label = {"Literature review": "Review topic", "Verify a claim": "Claim to verify"}.get(
        mode, "What should the sources cover?"
    )
    await page.get_by_label(label).fill(text)
    if mode == "Source list":
        await page.get_by_label("Workspace").fill("bench")
        await page.get_by_label("Number of references").fill("10")
    started = time.perf_counter()
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url("**/run/**")
    await page.locator(SHOWN).first.wait_for(timeout=LIMIT_MS)
    submitted = time.perf_counter() - started
    started = time.perf_counter()
    await page.reload()
    await page.locator(SHOWN).first.wait_for(timeout=LIMIT_MS)
    return submitted, time.perf_counter() - started


async def measure(gateway: str, key: str, chromium: str, rounds: int) -> dict[str, list]:
    from playwright.async_api import async_playwright

    httpx.put(  # noqa: ASYNC210 - once, before the browser starts
        f"{gateway}/api/research/v1/source-lists/limits/bench",
        json={"allowed_apis": ["corpus"], "max_references": 10},
        headers={"X-API-Key": key},
        timeout=30,
    ).raise_for_status()
    found: dict[str, list] = {"review": [], "verification": [], "source_list": []}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = await (await browser.new_context(viewport={"width": 1400, "height": 900})).new_page()
        await page.goto(f"{gateway}/")
        await page.get_by_label("API key").fill(key)
        async with page.expect_navigation():
            await page.get_by_role("button", name="Sign in").click()
        for n in range(rounds):
            i = n % len(TOPICS)
            for kind, mode, text in (
                ("review", "Literature review", TOPICS[i]),
                ("verification", "Verify a claim", CLAIMS[i]),
                ("source_list", "Source list", TOPICS[i]),
            ):
                submitted, reloaded = await _timed_run(page, mode, text)
                found[kind].append((submitted, reloaded))
                print(
                    f"{kind:13} submit→shown {submitted:6.1f} s   reload→shown {reloaded:5.2f} s   {text}"
                )
        await browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--chromium", default=os.environ.get("CONSOLE_CHROMIUM", "/usr/bin/chromium")
    )
    args = parser.parse_args()
    with demo_stack("bench-console-", SERVICES) as stack:
        found = asyncio.run(measure(stack.gateway_url, stack.admin_key, args.chromium, args.rounds))
    median = {k: statistics.median(s for s, _ in v) for k, v in found.items()}
    reloads = [r for v in found.values() for _, r in v]
    for kind, value in median.items():
        print(f"median {kind:13} submit→shown {value:6.1f} s")
    print_summary(
        f"bench:console review_s={median['review']:.1f} verification_s={median['verification']:.1f} "
        f"source_list_s={median['source_list']:.1f} reload_s={statistics.median(reloads):.2f} "
        f"reload_max_s={max(reloads):.2f} rounds={args.rounds} corpus=demo"
    )


if __name__ == "__main__":
    main()
