"""A researcher coming back, in a real browser: a paper of their own library (the importer's Zotero
fixture, with authors, year, venue and DOI) is cited by a verification submitted through the form;
the finished run page, reloaded, shows its result with the coverage banner; a citation opens the
paper's page (metadata, DOI link, quoted sentence marked, the citing report); the BibTeX export
carries the paper's fields; My work lists and finds what the key asked; the audit page narrows by
action; a paper nobody has reads as words."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from bench.harness.servers import Servers
from research_corpus.ingest import ingest_path
from research_engine.stack import Stack
from research_platform.db import create_engine, session_factory
from tests.console.conftest import shot
from tests.console.test_console import LONG
from tests.console.test_console_errors import plain
from tests.corpus.library_fixture import EXPORTS

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
CLAIM = "Daily low-dose aspirin reduces the incidence of a first myocardial infarction in adults over 70"


async def one_paper_library(servers: Servers, folder: Path) -> None:
    """Ingest the Zotero fixture's first entry (Ruiz et al. 2018, The Lancet, a DOI) into the corpus."""
    entries = (EXPORTS / "zotero.bib").read_text().split("\n@")
    (folder / "aspirin.bib").write_text(entries[0] if entries[0].strip() else "@" + entries[1])
    engine = create_engine(servers.database_url)
    try:
        await ingest_path(
            session_factory(engine), folder / "aspirin.bib", fmt="bibtex", progress=False
        )
    finally:
        await engine.dispose()


async def test_a_cited_library_paper_has_a_page_its_bibtex_fields_and_my_work_finds_the_claim(
    open_console: Any, console_stack: Stack, servers: Servers, tmp_path: Path
) -> None:
    await one_paper_library(servers, tmp_path)
    page = await open_console(console_stack.admin_key)
    await page.get_by_role("radio", name="Verify a claim").check()
    await page.get_by_label("Claim to verify").fill(CLAIM)
    await page.get_by_role("button", name="Submit").click()
    await page.wait_for_url(re.compile(r"/run/.*kind=verification"))
    await expect(page.locator("#run-status")).to_have_text(
        re.compile("completed|failed"), timeout=LONG
    )
    run_url = page.url
    await page.reload()  # the finished run: its stored result, titled by its claim
    await expect(page.get_by_role("heading", level=1)).to_have_text(CLAIM)
    banner = page.get_by_role("region", name="Coverage")
    await expect(banner).to_contain_text(
        re.compile(r"\d+ sources? cited\. \d+ papers? from the local corpus")
    )
    await shot(page, "verify-coverage")
    paper_link = page.locator("#result p.ref", has_text="Low-dose aspirin").locator("a.paper-link")
    await paper_link.click()
    await page.wait_for_url(re.compile(r"/paper/"))
    await expect(page.get_by_role("heading", level=1)).to_contain_text("Low-dose aspirin")
    await expect(page.locator(".paper-meta")).to_have_text(
        "Ana Ruiz, Bo Chen, Jürgen Müller · 2018 · The Lancet"
    )
    await expect(page.get_by_role("link", name="DOI ↗")).to_have_attribute(
        "href", re.compile(r"^https://doi\.org/10\.1016/s0140-6736\(18\)31924-x$", re.IGNORECASE)
    )
    await expect(page.locator(".abstract mark").first).to_be_visible()  # the quoted sentence
    await expect(page.locator(".cited-by")).to_contain_text(CLAIM)
    await shot(page, "paper")
    await page.go_back()
    await expect(page.get_by_role("link", name="BibTeX")).to_be_visible()
    async with page.expect_download() as download:
        await page.get_by_role("link", name="BibTeX").click()
    bib = (await (await download.value).path()).read_text()
    entry = next(e for e in bib.split("@")[1:] if "aspirin" in e.lower())
    assert re.match(r"article\{ruiz2018[a-z]+,", entry), entry  # a key a reference manager takes
    assert "Ruiz, Ana and Chen, Bo and" in entry and "{2018}" in entry
    assert "{The Lancet}" in entry and re.search(
        r"doi = \{10\.1016/s0140-6736\(18\)31924-x\}", entry, re.IGNORECASE
    )
    assert "corpus:" not in re.sub(r"note = \{[^}]*\}", "", bib)  # no `corpus:` URL, only the note
    await page.get_by_role("link", name="My work").click()
    row = page.locator("#work tr", has_text=CLAIM)
    await expect(row).to_contain_text("Verification")
    await page.get_by_label("Search").fill("LOW-DOSE ASPIRIN")
    await page.get_by_role("button", name="Show").click()
    await expect(page.locator("#work tr")).to_have_count(1)
    await shot(page, "my-work")
    await row.get_by_role("link", name=CLAIM, exact=True).click()
    await page.wait_for_url(run_url)
    await expect(page.locator("#result article.markdown h2").first).to_be_visible()
    await page.get_by_role("link", name="Audit").click()
    await page.get_by_label("Action").fill("research.report.opened")
    await page.get_by_role("button", name="Show events").click()
    await expect(
        page.locator('#audit tr[data-action="research.report.opened"]').first
    ).to_be_visible()
    await expect(
        page.locator("#audit tr:not([data-action='research.report.opened'])")
    ).to_have_count(0)
    await shot(page, "audit")
    await page.goto(f"{console_stack.gateway_url}/paper/corpus:no-such-paper")
    await expect(page.locator("#paper")).to_have_text("Paper not available.")
    assert (await plain(page)) == "No paper corpus:no-such-paper"
