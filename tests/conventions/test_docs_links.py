"""Every relative link in the README and the docs/ pages leads somewhere: the file exists and,
when the link names a heading (`page.md#anchor`), the page has that heading (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def prose(markdown: str) -> str:
    """The page without fenced blocks and code spans, where `[x](y)` is not a link."""
    return _CODE_SPAN.sub("", _FENCE.sub("", markdown))


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading suffixed -1, -2 …"""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", markdown)):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    text = page.read_text()
    for target in _LINK.findall(prose(text)):
        if re.match(
            r"^[a-z][a-z0-9+.-]*:", target
        ):  # https:, mailto: — not a file of this repository
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading with that anchor in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_links_every_docs_page_it_hands_its_detail_to() -> None:
    linked = set(re.findall(r"\]\((docs/[\w-]+\.md)\)", (REPO / "README.md").read_text()))
    for page in ("user-guide", "api", "architecture", "operations", "configuration", "benchmarks"):
        assert f"docs/{page}.md" in linked


def test_a_missing_page_or_heading_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Keys and roles (admin)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#keys-and-roles-admin) [here](#a-heading) [web](https://example.org/x)\n"
        "`[not a link](nowhere.md)`\n```\n[nor this](nowhere.md)\n```\n"
        "## A heading\n[gone](missing.md) [wrong](other.md#keys)\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#keys: no heading with that anchor in other.md",
    ]
