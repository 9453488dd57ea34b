"""The verdict rule: each of the six verdicts and each confidence from crafted evidence."""

from __future__ import annotations

import pytest

from research_verification import (
    Confidence,
    LabelledPassage,
    PassageStance,
    Verdict,
    decide_verdict,
)
from research_verification.verdict import MODERATE_P

S, C, Q, U = (
    PassageStance.SUPPORTS,
    PassageStance.CONTRADICTS,
    PassageStance.QUALIFIES,
    PassageStance.UNRELATED,
)
pytestmark = pytest.mark.unit


def p(
    source: str, label: PassageStance, strength: float = 0.9, statement: int = 0
) -> LabelledPassage:
    return LabelledPassage(source, label, strength, statement)


def test_three_strong_agreeing_sources_are_strongly_supported_with_high_confidence():
    a = decide_verdict([p("a", S, 0.95), p("b", S, MODERATE_P), p("c", S, 0.6)])
    assert (a.verdict, a.confidence) == (Verdict.STRONGLY_SUPPORTED, Confidence.HIGH)
    assert a.supporting_sources == 3
    assert a.headline == "Verdict: STRONGLY SUPPORTED · Confidence: HIGH"


def test_one_supporting_source_is_only_partial_support_its_confidence_its_probability():
    assert decide_verdict([p("a", S, 0.99)]).confidence is Confidence.MODERATE  # HIGH needs two
    a = decide_verdict([p("a", S, MODERATE_P - 0.01)])
    assert (a.verdict, a.confidence) == (Verdict.PARTIALLY_SUPPORTED, Confidence.LOW)


def test_the_calibrated_probability_decides_confidence_over_the_strength():
    sure = [LabelledPassage(s, S, 0.6, 0, probability=MODERATE_P) for s in "ab"]
    assert decide_verdict(sure).confidence is Confidence.HIGH


def test_a_source_on_the_other_side_lowers_confidence():
    a = decide_verdict([p("a", S, 0.99), p("b", S, 0.99), p("c", S, 0.99), p("d", C, 0.5)])
    assert a.verdict is Verdict.PARTIALLY_SUPPORTED and a.confidence is Confidence.LOW


def test_support_for_one_of_two_statements_is_partial():
    a = decide_verdict([p("a", S, 0.8), p("b", S, 0.7)], statements=2)
    assert a.coverage == 0.5
    assert a.verdict is Verdict.PARTIALLY_SUPPORTED


def test_support_mostly_qualified_is_partial():
    a = decide_verdict([p("a", S, 0.6), p("b", Q, 0.9), p("c", Q, 0.9)])
    assert a.verdict is Verdict.PARTIALLY_SUPPORTED


def test_sources_on_both_sides_are_mixed_evidence():
    a = decide_verdict([p("a", S), p("b", S), p("c", C), p("d", C, 0.8)])
    assert (a.verdict, a.confidence) == (
        Verdict.MIXED_EVIDENCE,
        Confidence.LOW,
    )  # it does not speak


def test_one_contradicting_source_is_weak_contradiction():
    a = decide_verdict([p("a", C, 0.7), p("b", U, 0.9)])
    assert (a.verdict, a.confidence) == (Verdict.WEAKLY_CONTRADICTED, Confidence.LOW)


def test_contradiction_outweighing_a_weak_support_is_weak_contradiction():
    a = decide_verdict([p("a", C, 0.9), p("b", C, 0.9), p("c", C, 0.9), p("d", S, 0.45)])
    assert a.verdict is Verdict.WEAKLY_CONTRADICTED  # a supporting source remains: not outright


def test_two_contradicting_sources_and_no_support_are_contradicted():
    a = decide_verdict([p("a", C, MODERATE_P), p("b", C, 0.6)])
    assert (a.verdict, a.confidence) == (Verdict.CONTRADICTED, Confidence.MODERATE)


def test_no_stance_at_all_is_insufficient_evidence_with_low_confidence():
    a = decide_verdict([p("a", U, 0.95), p("b", S, 0.2), p("c", C, 0.3)])
    assert (a.verdict, a.confidence) == (Verdict.INSUFFICIENT_EVIDENCE, Confidence.LOW)
    assert decide_verdict([]).verdict is Verdict.INSUFFICIENT_EVIDENCE


def test_many_passages_of_one_source_count_once():
    a = decide_verdict([p("a", S), p("a", S), p("a", S)])
    assert a.supporting_sources == 1
    assert a.verdict is Verdict.PARTIALLY_SUPPORTED


def test_a_source_torn_between_support_and_contradiction_qualifies():
    a = decide_verdict([p("a", S, 0.7), p("a", C, 0.7)])
    assert a.qualifying_sources == 1 and a.verdict is Verdict.PARTIALLY_SUPPORTED


def test_weak_passages_lower_confidence_but_not_the_count():
    weak = decide_verdict([p("a", S, 0.5), p("b", S, 0.5), p("c", S, 0.5)])
    assert weak.verdict is Verdict.STRONGLY_SUPPORTED
    assert weak.confidence is Confidence.LOW  # its strongest, 0.5, under MODERATE_P
