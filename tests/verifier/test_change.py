"""What counts as a change when a watched claim is verified again (`experiment.change`), and that a
retracted source is never evidence (`Evidence.best`)."""

from __future__ import annotations

import pytest

from research_verification import LabelledPassage, PassageStance, decide_verdict
from research_verifier.experiment import FINDING_KINDS, Evidence, Previous, change

pytestmark = pytest.mark.unit
S = PassageStance.SUPPORTS


def supported(*sources: str):
    return decide_verdict([LabelledPassage(s, S, 0.9, 0) for s in sources])


def test_a_first_run_or_an_unmoved_verdict_is_no_change() -> None:
    now = supported("a", "b", "c")
    assert change(None, now, set()) is None
    assert (
        change(Previous("STRONGLY SUPPORTED", "HIGH", frozenset({"a", "b", "c"})), now, {"z"})
        is None
    ), "a retracted paper the claim never cited changes nothing"


def test_a_confidence_that_moved_is_a_verdict_change() -> None:
    one_sure = decide_verdict([LabelledPassage("a", S, 0.9, 0), LabelledPassage("b", S, 0.7, 0)])
    moved = change(
        Previous("STRONGLY SUPPORTED", "HIGH", frozenset({"a", "b", "c"})), one_sure, set()
    )
    assert moved is not None and moved.kind == "verdict_changed" and moved.kind in FINDING_KINDS
    assert (moved.previous_confidence, moved.confidence) == (
        "HIGH",
        "MODERATE",
    ) and moved.retracted_sources == []


def test_a_verdict_moved_under_another_judge_is_a_judge_change_not_changed_evidence() -> None:
    before = Previous("WEAKLY CONTRADICTED", "LOW", frozenset({"a"}), judge="abstract-old/rules-1")
    now = supported("a")
    by_new_judge = change(before, now, set(), judge="abstract-new/rules-2")
    assert by_new_judge is not None and by_new_judge.cause == "judge"
    assert by_new_judge.payload()["previous_judge"] == "abstract-old/rules-1"
    same_judge = change(before, now, set(), judge="abstract-old/rules-1")
    assert same_judge is not None and same_judge.cause == "evidence"
    unknown_before = change(
        Previous("WEAKLY CONTRADICTED", "LOW", frozenset({"a"})), now, set(), "x"
    )
    assert unknown_before is not None and unknown_before.cause == "evidence"


def test_a_cited_source_now_retracted_is_a_change_even_when_the_verdict_holds() -> None:
    moved = change(
        Previous("STRONGLY SUPPORTED", "HIGH", frozenset({"a", "b", "c", "d"})),
        supported("b", "c", "d"),
        {"a"},
    )
    assert (
        moved is not None
        and moved.kind == "retracted_source" in FINDING_KINDS
        and moved.retracted_sources == ["a"]
    )
    assert moved.verdict == moved.previous_verdict == "STRONGLY SUPPORTED"


def test_a_retracted_source_is_no_evidence() -> None:
    evidence = Evidence(labelled=[LabelledPassage(s, S, 0.9, 0) for s in "abc"], retracted={"a"})
    assert [p.source_id for p in evidence.best()] == ["b", "c"]
