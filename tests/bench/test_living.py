"""bench:living's statistics and wave plan (unit): the interval around the task-latency ratio and
the reading of the target from it; each wave retracts papers of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.append(str(REPO / "bench"))  # appended: bench/mcp.py must not hide the mcp package
from living import Plan, ratio_interval, reading

pytestmark = pytest.mark.unit


def test_the_interval_holds_the_ratio_of_medians_and_narrows_with_more_tasks() -> None:
    before = [5.0, 5.2, 4.8, 5.1, 4.9] * 4
    during = [7.5, 8.0, 7.0, 7.8, 7.2] * 4
    low, high = ratio_interval(before, during)
    assert low <= 7.5 / 5.0 <= high
    few_low, few_high = ratio_interval(before[:3], during[:3])
    assert few_high - few_low > high - low
    assert ratio_interval(before, during) == (low, high)  # seeded: the same figures every run


def test_the_target_is_met_missed_or_inconclusive_by_the_interval() -> None:
    assert reading(1.2, 1.9) == "met"
    assert reading(2.1, 3.0) == "missed"
    assert reading(1.5, 2.5) == "inconclusive"


def test_each_wave_retracts_papers_of_its_own_and_the_stale_set_is_the_first_wave_s() -> None:
    plan = Plan(
        claims=200,
        reviews=10,
        watched=40,
        retracted=3,
        reviews_per_paper=2,
        watched_per_paper=4,
        waves=5,
    ).build()
    waves = [plan.wave(k) for k in range(5)]
    assert all(len(w) == 3 for w in waves)
    assert len({p for w in waves for p in w}) == 15
    cited_by_first = {
        plan.watched_ids[i]
        for i, papers in enumerate(plan.watched_papers)
        if set(papers) & set(waves[0])
    }
    assert plan.affected_watched == cited_by_first
