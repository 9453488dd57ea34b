"""The README's dependency list names every third-party package a pyproject.toml of this repository
declares (the product standard asks for one line per dependency saying why it is there)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def declared() -> set[str]:
    """Third-party distributions declared by the root, libs/* and services/* (extras included)."""
    names: set[str] = set()
    for manifest in [
        REPO / "pyproject.toml",
        *REPO.glob("libs/*/pyproject.toml"),
        *REPO.glob("services/*/pyproject.toml"),
    ]:
        project = tomllib.loads(manifest.read_text()).get("project", {})
        requirements = [
            *project.get("dependencies", []),
            *(r for extra in project.get("optional-dependencies", {}).values() for r in extra),
        ]
        for requirement in requirements:
            named = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
            assert named is not None, requirement
            name = named.group(0).lower()
            if not name.startswith("research-"):
                names.add(name)
    return names


def listed() -> str:
    """The README's `## Dependencies` section, lower case."""
    readme = (REPO / "README.md").read_text()
    section = re.search(r"^## Dependencies.*?$(.*?)(?=^## )", readme, re.MULTILINE | re.DOTALL)
    assert section, "the README has no ## Dependencies section"
    return section.group(1).lower()


def test_every_declared_dependency_has_a_line_in_the_readme() -> None:
    text = listed()
    missing = sorted(
        name for name in declared() if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
    )
    assert missing == [], (
        f"add a line saying why each is needed to the README's dependency list: {missing}"
    )
