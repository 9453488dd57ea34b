"""The relevance calibration's second feature (`research_judgement.coverage`): how much of a
question's vocabulary, weighted by rarity, a paper uses."""

from __future__ import annotations

import pytest

from research_judgement.coverage import FILE as VOCABULARY
from research_judgement.coverage import Vocabulary, stem, vocabulary
from research_judgement.judge import WEIGHTS

pytestmark = pytest.mark.unit

QUESTION = "Exercise training improves quality of life in patients with chronic heart failure"


def test_rare_words_weigh_more_than_common_ones():
    words = Vocabulary({"patient": 900, "failure": 40, "heart": 60}, documents=1000)
    about_patients = words.coverage("patients with heart failure", "All patients were seen.")
    about_failure = words.coverage("patients with heart failure", "Cardiac failure of the heart.")
    assert 0.0 < about_patients < 0.1 < about_failure < 1.0
    assert words.coverage(
        "patients with heart failure", "Patients with heart failure."
    ) == pytest.approx(1.0)
    assert words.coverage("of the and", "anything") == 0.0  # no content word, nothing to cover


def test_inflections_count_as_one_word():
    assert stem("improves") == stem("improved") == "improv" and stem("trials") == stem("trial")
    assert Vocabulary({}, 10).coverage("trials improved", "The trial improves") == pytest.approx(
        1.0
    )


def test_the_shipped_vocabulary_is_scifacts_and_round_trips(tmp_path):
    shipped = vocabulary(WEIGHTS / VOCABULARY)
    assert shipped.documents == 5183 and len(shipped.frequencies) > 10_000
    assert shipped.idf("failure") > shipped.idf("patient")
    shipped.save(tmp_path / "v.json.gz")
    again = Vocabulary.load(tmp_path / "v.json.gz")
    assert again.frequencies == shipped.frequencies and again.documents == shipped.documents
    # the demo's off-topic paper (an assessment of frail older people) shares no word of substance
    assert (
        shipped.coverage(
            QUESTION, "Identifying common impairments in frail and dependent older people"
        )
        == 0.0
    )


def test_the_rarest_word_of_a_question_is_its_least_used_content_word():
    words = Vocabulary({"patient": 900, "failure": 40, "heart": 60}, documents=1000)
    assert words.rarest("patients with heart failure") == "failure"
    assert words.rarest("of the and") is None
    # a name the literature never uses is the rarest of all
    assert vocabulary().rarest("Activation of PPM1D enhances p53 function") == "ppm1d"
