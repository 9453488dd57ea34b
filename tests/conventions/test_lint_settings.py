"""Lint that bites: ruff selects the rule sets the code is held to (pylint's `PL` among them),
`RUF100` fails a `noqa` that suppresses nothing, and every suppression says why."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.unit

LINTED = ("libs", "services", "src", "bench", "tests")
# A suppression names its codes, then after " - " says why; a bare one hides what it excuses.
NOQA = re.compile(r"#\s*noqa\b(?P<rest>.*)$")
REASONED = re.compile(r":\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*\s+-\s+\S")


def test_ruff_selects_the_rule_sets_and_keeps_unused_noqa_an_error() -> None:
    lint = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"][
        "lint"
    ]
    assert {"I", "B", "UP", "BLE", "S", "SIM", "RUF", "PT"} <= set(lint["extend-select"])
    assert {"PLE", "PLW", "PLC", "PLR"} <= set(lint["extend-select"])
    ignored = set(lint.get("extend-ignore", [])) | set(lint.get("ignore", []))
    assert not ignored & {"RUF", "RUF100", "BLE", "BLE001", "S", "SIM", "PT"}
    # Of pylint's rules only these four are left out everywhere: magic values, deferred imports
    # (counted by test_import_circles.py) and argument counts (keyword-only with defaults).
    assert {code for code in ignored if code.startswith("PL")} == {
        "PLR2004",
        "PLC0415",
        "PLR0913",
        "PLR0917",
    }
    for pattern, codes in lint.get("per-file-ignores", {}).items():
        assert "RUF100" not in codes, pattern


def test_every_noqa_names_its_rules_and_says_why() -> None:
    bare = []
    for folder in LINTED:
        for path in sorted((REPO / folder).rglob("*.py")):
            if ".venv" in path.parts or "node_modules" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found = NOQA.search(line)
                if found and not REASONED.match(found["rest"]):
                    bare.append(f"{path.relative_to(REPO)}:{number}")
    assert bare == []
