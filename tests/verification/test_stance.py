"""judge_answer: the offline critic's check that a claim's quotes take a stance on its question,
with the shipped stance model (research_judgement) on the demo's sentences."""

from __future__ import annotations

import pytest

from research_verification import AnswerStance, judge_answer
from research_verification.stance import question_as_statement

pytestmark = pytest.mark.unit

VISION_Q = "Does screening older people for asymptomatic visual impairment lead to improved vision?"


def test_the_demo_call_for_more_research_is_a_non_answer():
    quote = "Further work is needed to clarify what interventions are appropriate for older people with unreported impairment of vision."
    judgement = judge_answer(VISION_Q, [quote])
    assert judgement.stance is AnswerStance.NON_ANSWER and not judgement.answers
    assert "more research" in judgement.quotes[0].reason


def test_aims_and_background_are_non_answers():
    quotes = [
        "OBJECTIVE To assess whether population screening for impaired vision among older people in the community leads to improvements in vision.",
        "Little is known about the effect of vision screening in the community.",
    ]
    assert judge_answer(VISION_Q, quotes).stance is AnswerStance.NON_ANSWER


def test_the_demo_null_result_contradicts_the_question():
    quote = (
        "The inclusion of a visual screening component in the assessment did not result in improvements in self "
        "reported visual problems (pooled odds ratio 1.04:95% confidence interval 0.89 to 1.22)."
    )
    judgement = judge_answer(VISION_Q, [quote])
    assert judgement.stance is AnswerStance.CONTRADICT


@pytest.mark.parametrize(
    ("question", "quote", "title"),
    [
        (
            "Does prescribed exercise training improve quality of life in patients with chronic heart failure?",
            "Exercise training conferred modest but statistically significant improvements in self-reported health status compared with usual care without training.",
            "Effects of exercise training on health status in patients with chronic heart failure: HF-ACTION randomized controlled trial.",
        ),
        (
            "Do high levels of C-reactive protein (CRP) raise the risk of exacerbations in chronic obstructive pulmonary disease (COPD)?",
            "Simultaneously elevated levels of CRP and fibrinogen and leukocyte count in individuals with COPD were associated with increased risk of having exacerbations, even in those with milder COPD and in those without previous exacerbations.",
            "Inflammatory biomarkers and exacerbations in chronic obstructive pulmonary disease.",
        ),
    ],
)
def test_the_demo_supported_findings_answer_their_questions(question, quote, title):
    # as the critic asks: each quote with its source's title (the claim's supports carry it)
    assert judge_answer(question, [quote], titles=[title]).stance is AnswerStance.SUPPORT


def test_a_stance_among_non_answers_still_answers():
    quotes = [
        "Further research is needed.",
        "Exercise training significantly improved quality of life (P < .001).",
    ]
    judgement = judge_answer("Does exercise training improve quality of life?", quotes)
    assert judgement.answers and judgement.quotes[0].stance is AnswerStance.NON_ANSWER


def test_no_quotes_is_a_non_answer_and_questions_become_statements():
    assert judge_answer(VISION_Q, []).stance is AnswerStance.NON_ANSWER
    assert question_as_statement("Does X lead to Y?") == "X lead to Y"
    assert question_as_statement("Is it true that X leads to Y?") == "X leads to Y"
