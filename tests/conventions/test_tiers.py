"""Every test carries a tier marker: collection refuses one that does not (tests/conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.conftest import refuse_untiered, tier_markers

pytestmark = pytest.mark.unit


@dataclass
class Collected:
    nodeid: str
    marks: list[str] = field(default_factory=list)

    def iter_markers(self) -> list[pytest.Mark]:
        return [getattr(pytest.mark, name).mark for name in self.marks]


def test_the_tiers_are_the_markers_registered_in_pyproject_and_no_plugin_marker() -> None:
    tiers = tier_markers()
    assert {"unit", "integration", "e2e", "browser", "chaos"} <= tiers
    assert not tiers & {"asyncio", "timeout", "parametrize", "skip"}


def test_a_test_without_a_tier_stops_collection_and_is_named() -> None:
    tiers = tier_markers()
    items = [
        Collected("tests/a.py::tiered", ["unit"]),
        Collected("tests/b.py::only_asyncio", ["asyncio", "parametrize"]),
        Collected("tests/c.py::bare"),
    ]
    with pytest.raises(pytest.UsageError) as refused:
        refuse_untiered(items, tiers)
    message = str(refused.value)
    assert "2 test(s) carry no tier marker" in message
    assert (
        "tests/b.py::only_asyncio" in message
        and "tests/c.py::bare" in message
        and "tiered" not in message.split(":\n")[1]
    )


def test_tiered_tests_pass_untouched() -> None:
    refuse_untiered(
        [
            Collected("tests/a.py::x", ["integration"]),
            Collected("tests/b.py::y", ["e2e", "asyncio"]),
        ],
        tier_markers(),
    )
