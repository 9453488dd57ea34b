"""Verification on the trained judgement: thresholds come from the models, evidence sentences are
labelled by the stance model, QUALIFIES comes from the conditions the evidence states (never from
how sure the model is), and the critic's non-answer check asks the same judge."""

from __future__ import annotations

import pytest

from research_verification import (
    AnswerStance,
    PassageStance,
    judge_answer,
    judge_paper,
    label_passages,
    null_result,
    stated_conditions,
    thresholds,
)
from tests.verification.fixed_judge import FixedJudge

pytestmark = pytest.mark.unit

CLAIM = "Exercise training improves quality of life in patients with chronic heart failure"
HF_ACTION = (
    "Exercise training conferred modest but statistically significant improvements in self-reported health "
    "status compared with usual care"
)
DESIGN = "Patients were randomly assigned to exercise training or usual care in 82 centres."
AFFERENTS = "Exercise training significantly enhanced the inhibitory influence of cardiac afferents on vascular resistance."


def test_thresholds_are_the_ones_the_shipped_models_name():
    named = FixedJudge(
        config={
            "pair": {"thresholds": {"rationale": 0.3, "sure": 0.9}},
            "relevance": {"thresholds": {"on_topic": 0.4, "strong": 0.8}},
        }
    )
    assert thresholds(named) == thresholds(named).__class__(
        evidence=0.3, sure_evidence=0.9, on_topic=0.4, squarely_on_topic=0.8
    )
    unnamed = FixedJudge(config={"pair": {"thresholds": {"rationale": 0.2}}, "relevance": {}})
    limits = thresholds(unnamed)  # what the models do not name sits halfway to 1
    assert (limits.evidence, limits.sure_evidence, limits.on_topic, limits.squarely_on_topic) == (
        0.2,
        0.6,
        0.5,
        0.75,
    )


def test_a_paper_is_judged_by_its_evidence_sentences_best_first():
    judge = FixedJudge(
        {HF_ACTION: (0.8, 0.1, 0.1), DESIGN: (0.1, 0.1, 0.8), AFFERENTS: (0.3, 0.1, 0.6)}
    )
    paper = judge_paper(CLAIM, "HF-ACTION", [DESIGN, AFFERENTS, HF_ACTION], judge)
    assert paper.label == "SUPPORT" and paper.best is not None and paper.best.sentence == HF_ACTION
    assert [p.sentence for p in paper.evidence] == [
        HF_ACTION
    ]  # the others are below the evidence threshold
    contradicted = judge_paper(CLAIM, "t", [HF_ACTION], FixedJudge({HF_ACTION: (0.1, 0.8, 0.1)}))
    assert contradicted.label == "CONTRADICT"
    assert (
        judge_paper(CLAIM, "t", [DESIGN], judge).label == "NEI"
        and judge_paper(CLAIM, "t", [], judge).evidence == ()
    )


def test_the_claim_and_titled_sentences_reach_the_model():
    judge = FixedJudge()
    judge_paper(CLAIM, "HF-ACTION", [DESIGN], judge)
    assert judge.calls == [("stance", CLAIM, [DESIGN])]


@pytest.mark.parametrize(
    ("sentence", "claim", "kinds"),
    [
        (
            "Aspirin reduced ischaemic stroke among women aged over 65.",
            "Aspirin reduces stroke risk",
            ["population"],
        ),
        ("At 300 mg/day, aspirin reduced stroke.", "Aspirin reduces stroke risk", ["dose"]),
        (
            "In a mouse model, the drug reduced infarct size.",
            "The drug reduces infarct size",
            ["setting"],
        ),
        (
            "The benefit was seen only in patients who adhered to training.",
            "Training improves fitness",
            ["restriction"],
        ),
        (
            "Aspirin reduced stroke in women but not in men.",
            "Aspirin reduces stroke risk",
            ["population", "restriction"],
        ),
    ],
)
def test_conditions_the_evidence_states(sentence, claim, kinds):
    assert [c.kind for c in stated_conditions(sentence, claim)] == kinds


def test_a_condition_the_claim_names_restricts_nothing():
    assert stated_conditions(HF_ACTION + " in patients with chronic heart failure.", CLAIM) == []
    assert (
        stated_conditions(
            "Aspirin reduced stroke among women.", "Aspirin reduces stroke among women"
        )
        == []
    )


def test_qualifies_comes_from_stated_conditions_not_from_low_confidence():
    judge = FixedJudge(
        {
            "Training improved quality of life among women over 70.": (0.52, 0.45, 0.03),
            HF_ACTION: (0.51, 0.47, 0.02),
        }
    )
    conditioned = judge_paper(
        CLAIM, "t", ["Training improved quality of life among women over 70."], judge
    )
    (qualifying,) = label_passages(
        list(conditioned.evidence), "corpus:1", 0, CLAIM, conditioned.label
    )
    assert qualifying.label is PassageStance.QUALIFIES and qualifying.conditions == (
        "among women over 70 (population)",
    )
    close = judge_paper(
        CLAIM, "t", [HF_ACTION], judge
    )  # nearly as much CONTRADICT as SUPPORT, no condition
    (supporting,) = label_passages(list(close.evidence), "corpus:2", 0, CLAIM, close.label)
    assert supporting.label is PassageStance.SUPPORTS and supporting.conditions == ()


def test_a_contradiction_with_conditions_stays_a_contradiction():
    sentence = "Among women, training did not improve quality of life."
    paper = judge_paper(CLAIM, "t", [sentence], FixedJudge({sentence: (0.1, 0.85, 0.05)}))
    (passage,) = label_passages(list(paper.evidence), "corpus:3", 0, CLAIM, paper.label)
    assert passage.label is PassageStance.CONTRADICTS


TREND = "There was a trend toward greater improvement in disabilities in activities of daily living (-1.5, -3.3 to 0.4; P = 0.10)."


@pytest.mark.parametrize(
    ("sentence", "claim", "null"),
    [
        (TREND, CLAIM, True),
        ("Quality of life did not differ significantly between groups (P = .32).", CLAIM, True),
        ("The difference was not statistically significant.", CLAIM, True),
        (HF_ACTION + " (P < .001).", CLAIM, False),
        (
            "Walking distance improved (P < .001) but quality of life did not (P = 0.30).",
            CLAIM,
            False,
        ),  # an effect is reported
        (
            TREND,
            "Exercise training does not improve quality of life",
            False,
        ),  # the claim states the null itself
    ],
)
def test_a_null_result_is_told_from_a_reported_effect(sentence, claim, null):
    assert null_result(sentence, claim) is null


def test_a_non_significant_trend_supports_no_claimed_effect():
    # the demo's verification counted this trend (a trial of older adults, not heart failure) as corroborating
    paper = judge_paper(
        CLAIM,
        "t",
        [TREND, HF_ACTION],
        FixedJudge({TREND: (0.55, 0.35, 0.1), HF_ACTION: (0.8, 0.1, 0.1)}),
    )
    labelled = {
        p.text: p.label
        for p in label_passages(list(paper.evidence), "corpus:4", 0, CLAIM, paper.label)
    }
    assert labelled == {TREND: PassageStance.UNRELATED, HF_ACTION: PassageStance.SUPPORTS}


def test_the_non_answer_check_asks_the_judge_with_the_question_as_a_statement():
    judge = FixedJudge({HF_ACTION: (0.8, 0.1, 0.1), DESIGN: (0.1, 0.1, 0.8)})
    question = (
        "Does exercise training improve quality of life in patients with chronic heart failure?"
    )
    assert judge_answer(question, [HF_ACTION], judge).stance is AnswerStance.SUPPORT
    assert judge.calls[-1] == (
        "stance",
        "exercise training improve quality of life in patients with chronic heart failure",
        [HF_ACTION],
    )
    no_stance = judge_answer(question, [DESIGN], judge)
    assert (
        no_stance.stance is AnswerStance.NON_ANSWER and "stance model" in no_stance.quotes[0].reason
    )
    cued = judge_answer(question, ["Further research is needed on exercise training."], judge)
    assert cued.stance is AnswerStance.NON_ANSWER and "more research" in cued.quotes[0].reason
    against = judge_answer(question, [HF_ACTION], FixedJudge({HF_ACTION: (0.1, 0.8, 0.1)}))
    assert against.stance is AnswerStance.CONTRADICT


def test_nothing_in_production_imports_the_former_classifier():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    callers = [
        p
        for folder in ("services", "libs", "src")
        for p in (root / folder).rglob("*.py")
        if "get_classifier" in p.read_text() or "PassageClassifier" in p.read_text()
    ]
    allowed = {
        "classifier.py",
        "__init__.py",
    }  # its own module and the package's export (for bench/verify.py)
    assert [
        p for p in callers if p.name not in allowed or "research_verification" not in str(p)
    ] == []
